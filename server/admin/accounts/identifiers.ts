import { and, asc, eq, sql, type SQL } from 'drizzle-orm';
import type { Caller } from '../../../contract/services';
import { ApiError, badRequest, forbidden, notFound } from '../../../contract/errors';
import type { Db, Tx } from '../../adapters/storage/database';
import { accounts } from '../../adapters/storage/schema';
import type { AccountRow } from '../../state/accounts/account-cache';
import { isDescendantDna } from '../../state/accounts/caller';
import { DNA_PATH, inSubtree } from '../billing/subtree';

const INT_MAX = 2_147_483_647;

/** `R{n}`: roles are words in storage; the path filter names them by number (as `/x-bill` does). */
export const ROLE_CODES: Record<number, 'user' | 'owner'> = { 0: 'user', 1: 'owner' };

export type Identifier =
  | { kind: 'id'; id: number }
  | { kind: 'name'; name: string }
  | { kind: 'email'; email: string }
  | { kind: 'dna'; dna: string }
  | { kind: 'filter'; label: string; where: SQL };

/**
 * The identifier forms the API accepts: a numeric ID, an email (contains `@`), a DNA path (starts
 * with `.`), a filter (`L{n}` Level, `G{n}` Gear, `R{n}` Role, `T{n}` Tier, `F{n}` Factor, which
 * may be a decimal: `F1.5`), or else a username. Names can never look like a filter.
 */
export function parseIdentifier(raw: string): Identifier {
  const value = raw.trim();
  if (value === '') throw badRequest('identifier: must not be empty');
  if (/^\d+$/.test(value)) return { kind: 'id', id: Number(value) };
  if (value.startsWith('.')) {
    if (!DNA_PATH.test(value)) throw badRequest(`identifier: "${value}" is not a DNA path (like .1.42.)`);
    return { kind: 'dna', dna: value };
  }
  if (value.includes('@')) return { kind: 'email', email: value.toLowerCase() };
  const filter = /^([LGRTF])(\d{1,9}(?:\.\d{1,9})?)$/i.exec(value);
  if (filter) {
    const letter = filter[1].toUpperCase();
    const n = Number(filter[2]);
    if (letter !== 'F' && !Number.isInteger(n)) throw badRequest(`identifier: ${value}: ${letter}{n} takes a whole number`);
    const where = letter === 'L' ? eq(accounts.level, n)
      : letter === 'G' ? eq(accounts.gear, n)
      : letter === 'T' ? eq(accounts.tier, n)
      : letter === 'F' ? eq(accounts.factor, n)
      : ROLE_CODES[n] ? eq(accounts.role, ROLE_CODES[n]) : undefined;
    if (!where) throw badRequest(`identifier: ${value}: role codes are ${Object.entries(ROLE_CODES).map(([k, v]) => `R${k} (${v})`).join(', ')}`);
    return { kind: 'filter', label: value, where };
  }
  return { kind: 'name', name: value };
}

/** For endpoints that act on one account: a filter is refused. */
export function parseSingleIdentifier(raw: string, what = 'identifier'): Exclude<Identifier, { kind: 'filter' }> {
  const id = parseIdentifier(raw);
  if (id.kind === 'filter') throw badRequest(`${what}: ${id.label} is a filter; name one account by ID, username, email or DNA path`);
  return id;
}

function condition(id: Exclude<Identifier, { kind: 'filter' }>): SQL {
  switch (id.kind) {
    case 'id': return id.id > INT_MAX ? sql`false` : eq(accounts.id, id.id);
    case 'dna': return eq(accounts.dna, id.dna);
    case 'email': return eq(accounts.email, id.email);
    case 'name': return eq(accounts.name, id.name);
  }
}

export function describe(id: Exclude<Identifier, { kind: 'filter' }>): string {
  switch (id.kind) {
    case 'id': return `#${id.id}`;
    case 'dna': return id.dna;
    case 'email': return id.email;
    case 'name': return `"${id.name}"`;
  }
}

/** How many accounts an ambiguous name or email lists (Root only: it sees every tenant). */
const AMBIGUOUS_SHOWN = 5;

/**
 * The answer for an identifier that names nothing the caller may reach. An Owner's reach is
 * its tenant (Root's: every tenant), so what it cannot reach either does not exist or lies in
 * another tenant, which is answered as if it did not exist: 404, from the identifier alone. A
 * caller below an Owner is out of scope beyond its own subtree (403) whether the account exists
 * or not, with one body for every identifier, so nothing can be probed; a DNA path below its own
 * names a place inside its subtree, where nothing is hidden from it: 404 like an Owner's.
 */
function unreachable(caller: Caller, id: Exclude<Identifier, { kind: 'filter' }>): ApiError {
  if (caller.isOwner || (id.kind === 'dna' && isDescendantDna(id.dna, caller.dna))) return notFound(`Account ${describe(id)} not found`);
  return new ApiError(403, 'Out of scope: you may name only your own account and the accounts below it', 'out_of_scope');
}

/**
 * One account the caller can reach, by identifier: the caller itself or an account below it
 * in its tenant (for Root, any account); any other is `unreachable`, the one rule every route
 * that names an account answers by. Names and emails are unique per tenant and every tree but
 * Root's lies in one tenant, so only Root can meet a name two accounts share: it gets a 400
 * listing them. `lock` takes the row lock for the rest of the transaction.
 */
export async function findAccount(
  db: Db | Tx, caller: Caller, id: Exclude<Identifier, { kind: 'filter' }>, opts: { lock?: boolean; param?: string } = {},
): Promise<AccountRow> {
  const reach = caller.isRoot ? undefined : and(eq(accounts.ownerId, caller.ownerId), inSubtree(accounts.dna, caller.dna));
  const query = db.select().from(accounts).where(and(condition(id), reach)).orderBy(asc(accounts.id)).limit(AMBIGUOUS_SHOWN + 1);
  const rows = opts.lock ? await query.for('update') : await query;
  if (rows.length === 0) throw unreachable(caller, id);
  if (rows.length > 1) {
    const listed = rows.slice(0, AMBIGUOUS_SHOWN).map((r) => `#${r.id} ${r.dna}`).join(', ');
    throw badRequest(`${opts.param ?? 'identifier'}: ${describe(id)} names accounts of several tenants (${listed}${rows.length > AMBIGUOUS_SHOWN ? ', …' : ''}); name one by ID or DNA path`, 'ambiguous_identifier');
  }
  return rows[0];
}

/** Some operations may not target the caller's own account. */
export function refuseSelf(caller: Caller, row: AccountRow): void {
  if (row.id === caller.id) throw forbidden('You cannot do this to your own account');
}
