import { asc, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../adapters/storage/database';
import { accounts, creditGrants } from '../../adapters/storage/schema';
import { openTestDatabase } from '../../testing/database';
import { activeGrants, activeGrantsOf, balanceOf, deductCredit, grantCredit, rescaleGrants, spendableOf, standingOf, takeCredit } from './ledger';

const onPostgres = Boolean(process.env.TEST_DATABASE_URL);
let database: Database;
let close: (() => Promise<void>) | undefined;

beforeAll(async () => {
  if (!onPostgres) console.warn(`ledger.test.ts: the concurrent-deduction test needs PostgreSQL and is skipped (TEST_DATABASE_URL is unset)`);
  ({ database, close } = await openTestDatabase());
});
afterAll(async () => { await close?.(); });

const ROOT = 1;
const reset = async () => {
  await database.db.delete(creditGrants).where(eq(creditGrants.accountId, ROOT));
  await database.db.update(accounts).set({ overdraft: 0 }).where(eq(accounts.id, ROOT));
};

describe('credit ledger', () => {
  it('spends the earliest-expiring card first and never below zero', async () => {
    await reset();
    await database.db.transaction(async (tx) => {
      await grantCredit(tx, ROOT, 5, 100, 'late');
      await grantCredit(tx, ROOT, 3, 10, 'early');
    });
    const taken = await database.db.transaction((tx) => deductCredit(tx, ROOT, 4));
    expect(taken).toBe(4);
    const cards = await activeGrants(database.db, ROOT);
    expect(cards.map((c) => [c.reference, c.balance])).toEqual([['early', 0], ['late', 4]]);
    expect(await database.db.transaction((tx) => deductCredit(tx, ROOT, 10))).toBe(4);
    expect(await balanceOf(database.db, ROOT)).toBe(0);
  });

  it('carries what the cards cannot cover to the overdraft, and the next grant pays it first', async () => {
    await reset();
    await database.db.transaction((tx) => grantCredit(tx, ROOT, 3, 30, 'first'));
    expect(await database.db.transaction((tx) => deductCredit(tx, ROOT, 5))).toBe(3);
    expect(await standingOf(database.db, ROOT)).toMatchObject({ cards: 0, overdraft: 2 });
    expect(await spendableOf(database.db, ROOT)).toBe(-2);
    // A transfer takes only what is there and leaves the overdraft alone.
    expect(await database.db.transaction((tx) => takeCredit(tx, ROOT, 1))).toBe(0);
    expect(await database.db.transaction((tx) => grantCredit(tx, ROOT, 1.5, 30, 'small'))).toBe(1.5);
    expect(await standingOf(database.db, ROOT)).toMatchObject({ cards: 0, overdraft: 0.5 });
    expect(await database.db.transaction((tx) => grantCredit(tx, ROOT, 10, 30, 'top-up'))).toBe(0.5);
    const standing = await standingOf(database.db, ROOT);
    expect(standing).toMatchObject({ cards: 9.5, overdraft: 0 });
    const cards = await activeGrants(database.db, ROOT);
    expect(cards.map((c) => [c.reference, c.amount, c.balance])).toEqual([['first', 3, 0], ['small', 1.5, 0], ['top-up', 10, 9.5]]);
    expect(standing.lastGrant).toBe(Math.max(...cards.map((c) => c.id)));
  });

  it('rescales amount and balance of the unexpired cards', async () => {
    await reset();
    await database.db.transaction((tx) => grantCredit(tx, ROOT, 10, 30, 'card'));
    await database.db.transaction((tx) => deductCredit(tx, ROOT, 4));
    await database.db.transaction((tx) => rescaleGrants(tx, ROOT, 2));
    const [card] = await activeGrantsOf(database.db, [ROOT]);
    expect([card.amount, card.balance]).toEqual([20, 12]);
  });

  const concurrentTitle = 'never deducts more than was granted under many concurrent deductions on PostgreSQL'
    + (onPostgres ? '' : ' (SKIPPED: set TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres to run it)');
  it.skipIf(!onPostgres)(concurrentTitle, async () => {
    await reset();
    await database.db.transaction(async (tx) => {
      await grantCredit(tx, ROOT, 4, 10, 'a');
      await grantCredit(tx, ROOT, 3.5, 20, 'b');
      await grantCredit(tx, ROOT, 2.5, 30, 'c');
    });
    const granted = 10;
    // 80 transactions of 0.37 want 29.6: far more than there is, all at once on a pool of 10 connections.
    const takes = await Promise.all(Array.from({ length: 80 }, () => database.db.transaction(async (tx) => {
      const t = await deductCredit(tx, ROOT, 0.37);
      await new Promise((r) => setTimeout(r, 2));
      return t;
    })));
    const total = takes.reduce((s, t) => s + t, 0);
    expect(total).toBeLessThanOrEqual(granted + 1e-9);
    expect(total).toBeCloseTo(granted, 9);
    const cards = await database.db.select().from(creditGrants).where(eq(creditGrants.accountId, ROOT)).orderBy(asc(creditGrants.id));
    expect(cards.every((c) => c.balance >= 0)).toBe(true);
    expect(cards.reduce((s, c) => s + c.balance, 0)).toBeCloseTo(0, 9);
    // 27 full takes of 0.37 (9.99) and one partial of 0.01.
    expect(takes.filter((t) => Math.abs(t - 0.37) < 1e-9)).toHaveLength(27);
    // The rest is billed, not lost: cards taken plus overdraft is everything charged.
    const { overdraft } = await standingOf(database.db, ROOT);
    expect(total + overdraft).toBeCloseTo(80 * 0.37, 9);
  });
});
