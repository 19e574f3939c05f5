import { and, eq, ne, or, type SQL } from 'drizzle-orm';
import { ApiError, conflict } from '../../../contract/errors';
import type { Db, Tx } from '../../adapters/storage/database';
import { accounts } from '../../adapters/storage/schema';
import { uniqueViolationConstraint } from '../../adapters/storage/errors';

const taken = (field: 'Name' | 'Email', value: string) =>
  conflict(`${field} "${value}" is already taken`, field === 'Name' ? 'duplicate_name' : 'duplicate_email');

/**
 * Turns a unique violation of a concurrent insert or update into the same 409 the explicit
 * check gives; anything else is rethrown as is.
 */
export function rethrowUnique(values: { name?: string; email?: string }) {
  return (err: unknown): never => {
    if (err instanceof ApiError) throw err;
    const constraint = uniqueViolationConstraint(err);
    if (constraint === null) throw err;
    if (constraint.includes('name') && values.name) throw taken('Name', values.name);
    if (constraint.includes('email') && values.email) throw taken('Email', values.email);
    if (constraint.includes('account_keys')) throw conflict('That key is already in use; send another or none', 'key_in_use');
    throw conflict('A record with the same unique value already exists', 'duplicate');
  };
}

/**
 * The explicit check before writing: a clear 409 in the common case (the index decides races).
 * Names and emails are unique per tenant: only the accounts of `tenant` (an Owner's ID) count,
 * so a collision with another tenant's account is no collision and reveals nothing.
 */
export async function assertAvailable(db: Db | Tx, tenant: number, values: { name?: string; email?: string }, exceptId?: number): Promise<void> {
  const conds: SQL[] = [];
  if (values.name !== undefined) conds.push(eq(accounts.name, values.name));
  if (values.email !== undefined) conds.push(eq(accounts.email, values.email));
  if (conds.length === 0) return;
  const where = and(eq(accounts.ownerId, tenant), or(...conds), exceptId === undefined ? undefined : ne(accounts.id, exceptId));
  const rows = await db.select({ name: accounts.name, email: accounts.email }).from(accounts).where(where).limit(2);
  if (values.name !== undefined && rows.some((r) => r.name === values.name)) throw taken('Name', values.name);
  if (values.email !== undefined && rows.some((r) => r.email === values.email)) throw taken('Email', values.email);
}
