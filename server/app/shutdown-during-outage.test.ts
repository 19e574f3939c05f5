import { afterEach, describe, expect, it } from 'vitest';
import { spawnServer, type RunningServer } from '../testing/spawn';
import { startMockUpstream, type MockUpstream } from '../testing/mock-upstream';
import { freshDatabaseUrl } from '../testing/database';
import { TcpRelay } from '../testing/tcp-relay';
import { proxiedAccount, usageRecordCount } from '../testing/proxied-account';
import { generateAccountKey } from '../adapters/security/crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * SIGTERM while PostgreSQL is away: the buffered usage is retried until SHUTDOWN_GRACE_MS runs
 * out, and written if the database comes back in time. Real processes, a real PostgreSQL, and
 * a relay in front of it that the test cuts.
 */
describe.runIf(process.env.TEST_DATABASE_URL)('SIGTERM during a database outage', () => {
  let mock: MockUpstream | undefined;
  let relay: TcpRelay | undefined;
  let server: RunningServer | undefined;
  let drop: (() => Promise<void>) | undefined;
  let dataDir = '';

  afterEach(async () => {
    if (server && server.child.exitCode === null) await server.stop('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
    await relay?.down();
    await mock?.close();
    await drop?.();
  });

  /** A server behind the relay with one call written, then `calls` more made while the database is cut. */
  async function outageWithBufferedUsage(graceMs: number, calls: number) {
    mock = await startMockUpstream();
    const fresh = await freshDatabaseUrl();
    drop = fresh.drop;
    const via = await TcpRelay.before(fresh.url);
    relay = via.relay;
    const rootKey = generateAccountKey();
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'sy-outage-'));
    server = await spawnServer({ DATABASE_URL: via.url, DATA_DIR: dataDir, ROOT_KEY: rootKey, MASTER_KEY: 'switchyard-outage-master-key-0123', SHUTDOWN_GRACE_MS: String(graceMs) }, 90_000);
    const account = await proxiedAccount(server.url, rootKey, mock, 'sk-up-outage-000000000000');
    expect((await account.call()).status).toBe(200);
    await expect.poll(() => usageRecordCount(fresh.url, account.id), { timeout: 5000 }).toBe(1);

    await relay.down();
    for (let i = 0; i < calls; i++) expect((await account.call()).status).toBe(200);
    // The timer has tried and failed at least once: the events are buffered, not written.
    await expect.poll(() => server!.stdout().includes('usage_flush_failed'), { timeout: 5000 }).toBe(true);
    return { account, databaseUrl: fresh.url, rootKey };
  }

  it('keeps retrying the flush and writes everything when the database returns within the grace', async () => {
    const { account, databaseUrl } = await outageWithBufferedUsage(15_000, 5);
    const signalled = Date.now();
    const exited = server!.stop('SIGTERM');
    await sleep(2000);
    expect(server!.child.exitCode).toBeNull();
    await relay!.up();
    expect(await exited).toBe(0);
    expect(Date.now() - signalled).toBeGreaterThanOrEqual(2000);
    expect(await usageRecordCount(databaseUrl, account.id)).toBe(6);
    expect(server!.stdout()).not.toContain('usage_lost_on_shutdown');
    expect(server!.stdout()).toContain('usage_flush_recovered');
  }, 120_000);

  it('when SHUTDOWN_GRACE_MS runs out, leaves the unwritten usage in the journal, and the next start writes it once', async () => {
    const { account, databaseUrl, rootKey } = await outageWithBufferedUsage(3000, 4);
    const signalled = Date.now();
    expect(await server!.stop('SIGTERM')).toBe(0);
    const took = Date.now() - signalled;
    expect(took).toBeGreaterThanOrEqual(3000);
    expect(took).toBeLessThan(15_000);
    const left = server!.stdout().split('\n').filter((l) => l.includes('"usage_left_in_journal"')).map((l) => JSON.parse(l));
    expect(left).toHaveLength(1);
    expect(left[0].events).toBe(4);
    expect(server!.stdout()).not.toContain('usage_lost_on_shutdown');
    await relay!.up();
    expect(await usageRecordCount(databaseUrl, account.id)).toBe(1);
    server = await spawnServer({ DATABASE_URL: databaseUrl, DATA_DIR: dataDir, ROOT_KEY: rootKey, MASTER_KEY: 'switchyard-outage-master-key-0123' }, 90_000);
    expect(server.stdout()).toContain('usage_journal_replayed');
    expect(await usageRecordCount(databaseUrl, account.id)).toBe(5);
  }, 120_000);
});
