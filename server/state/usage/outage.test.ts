import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../testing/gateway';
import { freshDatabaseUrl } from '../../testing/database';
import { TcpRelay } from '../../testing/tcp-relay';
import { createAccount, rootAccount, usageOf, type TestAccount } from '../../testing/accounts';
import { openDatabase, type Database } from '../../adapters/storage/database';
import { createLogger } from '../../core/log';
import { UsageRecorder } from './recorder';
import { databaseId } from './orphans';
import { UsageJournal } from './journal';

/**
 * A real PostgreSQL cut by a relay for the whole time 30,000 usage events are recorded: memory
 * holds at most maxBuffered (plus the one batch being retried), the rest waits in the journal,
 * and once the connection is back every event is written exactly once.
 */
describe.runIf(process.env.TEST_DATABASE_URL)('usage during a PostgreSQL outage', () => {
  let gw: TestGateway;
  let drop: () => Promise<void>;
  let url: string;
  let relay: TcpRelay;
  let viaRelay: Database;
  let owner: TestAccount;
  let dataDir: string;

  beforeAll(async () => {
    const fresh = await freshDatabaseUrl();
    url = fresh.url;
    drop = fresh.drop;
    gw = await startTestGateway({ tenancy: 'multi', databaseUrl: url });
    owner = await createAccount(gw, rootAccount(gw), { Role: 'owner' });
    const via = await TcpRelay.before(url);
    relay = via.relay;
    viaRelay = await openDatabase(via.url, os.tmpdir(), { log: createLogger(() => {}, 'error') });
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'sy-outage-journal-'));
  }, 60_000);
  afterAll(async () => {
    await viaRelay?.close();
    await relay?.down();
    await gw?.close();
    await drop?.();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('holds memory bounded while the database is away and writes every event once when it returns', async () => {
    const user = await createAccount(gw, owner, { CreditGranted: 1000 });
    const log = createLogger(() => {}, 'error');
    const journal = await UsageJournal.open(dataDir, await databaseId(gw.gateway.database.db), log);
    const r = new UsageRecorder(viaRelay.db, log, { journal, maxBuffered: 1000, maxPerTransaction: 500, intervalMs: 50 });
    await relay.down();
    let peak = 0;
    const total = 30_000;
    for (let i = 0; i < total; i++) {
      r.record(usageOf(user, { creditUsed: 0.001, requestId: `cut-${i}` }));
      peak = Math.max(peak, r.inMemory);
      if (i % 1000 === 999) await new Promise((res) => setTimeout(res, 20)); // let the timer try (and fail)
    }
    expect(r.buffered).toBe(total);
    expect(peak).toBeLessThanOrEqual(1000 + 500);
    expect(r.pendingCredit(user.id)).toBeCloseTo(30, 6);

    await relay.up();
    const deadline = Date.now() + 60_000;
    while (r.buffered > 0 && Date.now() < deadline) await r.flush().catch(() => new Promise((res) => setTimeout(res, 200)));
    expect(r.buffered).toBe(0);
    expect(r.pendingCredit(user.id)).toBe(0);

    const sql = postgres(url, { max: 1, onnotice: () => {} });
    try {
      const [{ n, distinct }] = await sql<{ n: number; distinct: number }[]>`select count(*)::int as n, count(distinct request_id)::int as distinct from usage_records where account_id = ${user.id}`;
      expect(n).toBe(total);
      expect(distinct).toBe(total);
      const [{ requests }] = await sql<{ requests: number }[]>`select coalesce(sum(requests), 0)::int as requests from usage_daily where account_id = ${user.id}`;
      expect(requests).toBe(total);
      const [{ below }] = await sql<{ below: number }[]>`select coalesce(sum(requests), 0)::int as below from usage_subtree_daily where ancestor_id = ${owner.id}`;
      expect(below).toBeGreaterThanOrEqual(total);
    } finally {
      await sql.end();
    }
    await r.close(Date.now() + 5000);
  }, 120_000);
});
