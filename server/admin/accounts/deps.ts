import { sql } from 'drizzle-orm';
import type { Db, Tx } from '../../adapters/storage/database';
import type { Changes } from '../../state/changes/state-changes';
import type { ManagePolicy } from '../auth/authorizer';
import type { Tenancy } from '../../core/settings';

/** What the account operations need from the rest of the gateway. */
export interface AccountDeps {
  db: Db;
  tenancy: Tenancy;
  /** Least CreditGranted of a new user account (and the proxy's minimum balance). */
  userMinBalance: number;
  userApiBalance: number;
  /** Announces a change inside its transaction and applies it to this instance's snapshots after commit. */
  changes: Changes;
  policy: ManagePolicy;
  /** Usage recorded by the proxy but not yet deducted from the account's cards. */
  pendingCredit(accountId: number): number;
}

/** Default validity of a credit card, in days (the reference's). */
export const DEFAULT_CREDIT_DAYS = 180;

/**
 * Reserves the next account ID, so the row is inserted with its final DNA path at once
 * (the DNA contains the ID and is unique).
 */
export async function nextAccountId(tx: Tx): Promise<number> {
  const result: any = await tx.execute(sql`select nextval(pg_get_serial_sequence('accounts', 'id'))::int as id`);
  const rows = Array.isArray(result) ? result : result.rows;
  return Number(rows[0].id);
}
