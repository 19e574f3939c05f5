import { and, asc, eq, gt, inArray, sql, sum } from 'drizzle-orm';
import type { Db, Tx } from '../../adapters/storage/database';
import { accounts, creditGrants } from '../../adapters/storage/schema';

const DAY_MS = 86_400_000;

/** Credit on the cards: the unexpired grants' balances (before any overdraft; see standingOf). */
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

/**
 * What the account can spend, in one read: the unexpired cards, the overdraft (served cost the
 * cards could not cover) and the latest grant's ID (the low-balance alert's period: it changes
 * with every top-up). Spendable credit is cards − overdraft.
 */
export async function standingOf(db: Db | Tx, accountId: number, now = new Date()): Promise<{ cards: number; overdraft: number; lastGrant: number }> {
  const [row] = await db.select({
    cards: sql<string | null>`(select sum(${creditGrants.balance}) from ${creditGrants} where ${creditGrants.accountId} = ${accountId} and ${creditGrants.expiresAt} > ${now.toISOString()}::timestamptz)`,
    lastGrant: sql<number | null>`(select max(${creditGrants.id}) from ${creditGrants} where ${creditGrants.accountId} = ${accountId})`,
    overdraft: accounts.overdraft,
  }).from(accounts).where(eq(accounts.id, accountId));
  if (!row) return { cards: 0, overdraft: 0, lastGrant: 0 };
  return { cards: Number(row.cards ?? 0), overdraft: Number(row.overdraft ?? 0), lastGrant: Number(row.lastGrant ?? 0) };
}

/** Credit minus overdraft: what the account has, as shown and as the proxy spends it. */
export async function spendableOf(db: Db | Tx, accountId: number, now = new Date()): Promise<number> {
  const s = await standingOf(db, accountId, now);
  return s.cards - s.overdraft;
}

/**
 * Adds a credit card of `amount` valid for `days`. An overdraft is paid first: the card is
 * issued for the full amount, its balance less what went to the overdraft (a grant that
 * only covers the overdraft leaves a card at 0, as the record of the grant). Returns what
 * paid the overdraft.
 */
export async function grantCredit(tx: Tx, accountId: number, amount: number, days: number, reference = ''): Promise<number> {
  if (!(amount > 0)) return 0;
  const now = new Date();
  const [acct] = await tx.select({ overdraft: accounts.overdraft }).from(accounts).where(eq(accounts.id, accountId)).for('update');
  const owed = Math.max(Number(acct?.overdraft ?? 0), 0);
  const paid = Math.min(owed, amount);
  if (paid > 0) await tx.update(accounts).set({ overdraft: sql`greatest(${accounts.overdraft} - ${paid}, 0)` }).where(eq(accounts.id, accountId));
  await tx.insert(creditGrants).values({ accountId, amount, balance: amount - paid, reference, grantedAt: now, expiresAt: new Date(now.getTime() + days * DAY_MS) });
  return paid;
}

/**
 * Charges served usage: takes `amount` from the account's cards, earliest expiry first, and
 * carries what they cannot cover to the account's overdraft, so a served request is always
 * billed in full (the next grant pays the overdraft first). Returns what the cards covered.
 * The cards are locked (FOR UPDATE) so concurrent charges serialize; the account row only
 * when there is an overdraft to add.
 */
export async function deductCredit(tx: Tx, accountId: number, amount: number, now = new Date()): Promise<number> {
  const taken = await takeCredit(tx, accountId, amount, now);
  const rest = amount - taken;
  // Below a pico-credit the difference is rounding of the card arithmetic, not unpaid usage.
  if (rest > 1e-12) await tx.update(accounts).set({ overdraft: sql`${accounts.overdraft} + ${rest}` }).where(eq(accounts.id, accountId));
  return taken;
}

/**
 * Takes up to `amount` from the account's cards, earliest expiry first, and returns what it
 * took (transfers and refunds: never more than is there). The cards are locked (FOR UPDATE)
 * so concurrent deductions serialize, and a card is never taken below zero (also enforced by
 * a CHECK constraint).
 */
export async function takeCredit(tx: Tx, accountId: number, amount: number, now = new Date()): Promise<number> {
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
