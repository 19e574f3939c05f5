import { and, asc, eq, gt, inArray, sql, sum } from 'drizzle-orm';
import type { Db, Tx } from '../../adapters/storage/database';
import { creditGrants } from '../../adapters/storage/schema';

const DAY_MS = 86_400_000;

/** Spendable credit: the unexpired grants' balances. */
export async function balanceOf(db: Db | Tx, accountId: number, now = new Date()): Promise<number> {
  const [row] = await db.select({ total: sum(creditGrants.balance) }).from(creditGrants)
    .where(and(eq(creditGrants.accountId, accountId), gt(creditGrants.expiresAt, now)));
  return Number(row?.total ?? 0);
}

/** The account's unexpired credit cards, earliest expiry first (the order they are spent in). */
export async function activeGrants(db: Db | Tx, accountId: number, now = new Date()) {
  return db.select().from(creditGrants)
    .where(and(eq(creditGrants.accountId, accountId), gt(creditGrants.expiresAt, now)))
    .orderBy(asc(creditGrants.expiresAt), asc(creditGrants.id));
}

/** Adds a credit card of `amount` valid for `days`. */
export async function grantCredit(tx: Tx, accountId: number, amount: number, days: number, reference = ''): Promise<void> {
  if (!(amount > 0)) return;
  const now = new Date();
  await tx.insert(creditGrants).values({ accountId, amount, balance: amount, reference, grantedAt: now, expiresAt: new Date(now.getTime() + days * DAY_MS) });
}

/**
 * Takes up to `amount` from the account's cards, earliest expiry first, and returns what it
 * took. The cards are locked (FOR UPDATE) so concurrent deductions serialize, and a card is
 * never taken below zero (also enforced by a CHECK constraint).
 */
export async function deductCredit(tx: Tx, accountId: number, amount: number, now = new Date()): Promise<number> {
  if (!(amount > 0)) return 0;
  const cards = await tx.select({ id: creditGrants.id, balance: creditGrants.balance }).from(creditGrants)
    .where(and(eq(creditGrants.accountId, accountId), gt(creditGrants.balance, 0), gt(creditGrants.expiresAt, now)))
    .orderBy(asc(creditGrants.expiresAt), asc(creditGrants.id))
    .for('update');
  let left = amount;
  for (const card of cards) {
    if (left <= 0) break;
    const take = Math.min(card.balance, left);
    await tx.update(creditGrants).set({ balance: sql`greatest(${creditGrants.balance} - ${take}, 0)` }).where(eq(creditGrants.id, card.id));
    left -= take;
  }
  return amount - left;
}

/** The unexpired cards of several accounts at once (list views), earliest expiry first per account. */
export async function activeGrantsOf(db: Db | Tx, accountIds: number[], now = new Date()) {
  if (accountIds.length === 0) return [];
  return db.select().from(creditGrants)
    .where(and(inArray(creditGrants.accountId, accountIds), gt(creditGrants.expiresAt, now)))
    .orderBy(asc(creditGrants.accountId), asc(creditGrants.expiresAt), asc(creditGrants.id));
}

/**
 * Multiplies the amount and balance of the account's unexpired cards by `factor` (a change of
 * Rates keeps what the credit buys). The cards are locked in deductCredit's order first, so a
 * concurrent deduction waits instead of deadlocking.
 */
export async function rescaleGrants(tx: Tx, accountId: number, factor: number, now = new Date()): Promise<void> {
  if (!(factor > 0) || factor === 1) return;
  const cards = await tx.select({ id: creditGrants.id }).from(creditGrants)
    .where(and(eq(creditGrants.accountId, accountId), gt(creditGrants.expiresAt, now)))
    .orderBy(asc(creditGrants.expiresAt), asc(creditGrants.id))
    .for('update');
  if (cards.length === 0) return;
  await tx.update(creditGrants)
    .set({ amount: sql`${creditGrants.amount} * ${factor}`, balance: sql`${creditGrants.balance} * ${factor}` })
    .where(inArray(creditGrants.id, cards.map((c) => c.id)));
}
