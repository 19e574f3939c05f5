import { asc, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, migrate, type Database } from '../../adapters/storage/database';
import { creditGrants } from '../../adapters/storage/schema';
import { ensureRoot } from '../../app/bootstrap-root';
import { freshDatabaseUrl } from '../../testing/database';
import { activeGrants, activeGrantsOf, balanceOf, deductCredit, grantCredit, rescaleGrants } from './ledger';

const onPostgres = Boolean(process.env.TEST_DATABASE_URL);
let database: Database;
let drop: () => Promise<void>;

beforeAll(async () => {
  if (!onPostgres) console.warn(`ledger.test.ts: the concurrent-deduction test needs PostgreSQL and is skipped (TEST_DATABASE_URL is unset)`);
  const fresh = await freshDatabaseUrl();
  drop = fresh.drop;
  database = await openDatabase(fresh.url, '/tmp/unused');
  await migrate(database);
  await ensureRoot(database.db, undefined);
});
afterAll(async () => {
  await database?.close();
  await drop?.();
});

const ROOT = 1;
const reset = () => database.db.delete(creditGrants).where(eq(creditGrants.accountId, ROOT));

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
  });
});
