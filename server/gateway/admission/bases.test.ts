import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../core/log';
import { jsonRecords } from '../../state/usage/record-writers';
import { UsageRecorder } from '../../state/usage/recorder';
import { createAccount, rootAccount, usageOf, type TestAccount } from '../../testing/accounts';
import { startTestGateway, type TestGateway } from '../../testing/gateway';
import { until } from '../../testing/until';
import { DatabaseBases, trackingSink } from './bases';
import { periodOf } from './store';

/**
 * Base values read while the recorder commits a batch: pending usage is read before the
 * query, so a batch that commits in between would be counted twice (once in the database,
 * once as pending), and a top-up would be met with a 402 for usage counted twice.
 */
let gw: TestGateway;
let owner: TestAccount;
beforeAll(async () => {
  gw = await startTestGateway({ tenancy: 'multi' });
  owner = await createAccount(gw, rootAccount(gw), { Role: 'owner', CreditGranted: 50 });
});
afterAll(async () => { await gw?.close(); });

/** A recorder whose next batch holds its transaction open until `release()`. */
function heldRecorder() {
  let entered = false;
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const recorder = new UsageRecorder(gw.gateway.database.db, createLogger(() => {}, 'error'), {
    intervalMs: 600_000,
    writeRecords: async (tx, events) => {
      await jsonRecords(tx, events);
      entered = true;
      await gate;
    },
  });
  return { recorder, release, entered: () => entered };
}

describe('DatabaseBases while a usage batch commits', () => {
  it('counts the batch once: in the database or as pending, never both', async () => {
    const user = await createAccount(gw, owner, { CreditGranted: 10 });
    const { recorder, release, entered } = heldRecorder();
    const bases = new DatabaseBases(gw.gateway.database.db, recorder);
    try {
      trackingSink(recorder, bases).record(usageOf(user, { creditUsed: 4 }));
      expect((await bases.credit(user.id)).spendable).toBeCloseTo(6, 9);
      const flushed = recorder.flush();
      await until(entered);
      expect(recorder.writeMark()).toBeUndefined();
      // The read starts while the batch is uncommitted, and the batch commits during it.
      const credit = bases.credit(user.id);
      const spend = bases.spend({ key: 'k', accountId: user.id, ownerId: user.ownerId, dna: user.dna, kind: 'day', ...periodOf('day', Date.now()), cap: 100, code: 'daily_limit_reached', alertAt: null });
      setTimeout(release, 50);
      expect((await credit).spendable).toBeCloseTo(6, 9);
      expect(await spend).toBeCloseTo(4, 9);
      expect(await flushed).toBe(1);
      expect(recorder.pendingCredit(user.id)).toBe(0);
      expect(recorder.writeMark()).toBeDefined();
      expect((await bases.credit(user.id)).spendable).toBeCloseTo(6, 9);
    } finally {
      release();
      await recorder.close?.();
    }
  });
});
