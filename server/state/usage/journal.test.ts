import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../testing/gateway';
import { createAccount, rootAccount, usageOf, type TestAccount } from '../../testing/accounts';
import { createLogger } from '../../core/log';
import type { Db } from '../../adapters/storage/database';
import { UsageRecorder } from './recorder';
import { databaseId } from './orphans';
import { UsageJournal } from './journal';

let gw: TestGateway;
let owner: TestAccount;
let dir: string;

beforeAll(async () => {
  gw = await startTestGateway({ tenancy: 'multi' });
  owner = await createAccount(gw, rootAccount(gw), { Role: 'owner', CreditGranted: 50 });
  dir = mkdtempSync(path.join(os.tmpdir(), 'sy-journal-'));
});
afterAll(async () => {
  await gw?.close();
  rmSync(dir, { recursive: true, force: true });
});

const db = () => gw.gateway.database.db;
const rows = <T>(q: ReturnType<typeof sql>) => gw.gateway.database.rows<T>(q);
const log = createLogger(() => {}, 'error');
/** The database while `down()` says so: every transaction fails like a lost connection. */
const switchable = (down: () => boolean) => new Proxy(db(), {
  get(target, prop, receiver) {
    if (prop === 'transaction') return (fn: any) => (down() ? Promise.reject(new Error('connection terminated unexpectedly')) : target.transaction(fn));
    return Reflect.get(target, prop, receiver);
  },
}) as Db;
const requestIds = async (accountId: number) => (await rows<{ request_id: string; n: number }>(
  sql`select request_id, count(*)::int as n from usage_records where account_id = ${accountId} group by request_id`));
/** A process that dies: its timers stop and nothing more reaches the journal or the database. */
function crash(r: UsageRecorder, j: UsageJournal) {
  clearInterval((r as any).timer);
  clearInterval((j as any).timer);
  clearInterval((j as any).heartbeat);
  (r as any).closed = true;
}

describe('usage journal', () => {
  it('holds at most maxBuffered events in memory during an outage and writes every one once, in order, when the database returns', async () => {
    const user = await createAccount(gw, owner, { CreditGranted: 100 });
    let down = true;
    const journal = await UsageJournal.open(dir, await databaseId(db()), log);
    const r = new UsageRecorder(switchable(() => down), log, { journal, maxBuffered: 100, maxPerTransaction: 50, intervalMs: 20 });
    for (let i = 0; i < 2000; i++) {
      r.record(usageOf(user, { creditUsed: 0.001, requestId: `outage-${i}` }));
      if (i % 100 === 0) await new Promise((res) => setTimeout(res, 5));
      expect(r.inMemory).toBeLessThanOrEqual(150);
    }
    expect(r.buffered).toBe(2000);
    expect(r.pendingCredit(user.id)).toBeCloseTo(2, 9);
    await expect(r.flush()).rejects.toThrow();
    down = false;
    while (r.buffered > 0) await r.flush().catch(() => undefined);
    expect(r.pendingCredit(user.id)).toBe(0);
    const ids = await requestIds(user.id);
    expect(ids).toHaveLength(2000);
    expect(ids.every((x) => x.n === 1)).toBe(true);
    // Back in memory mode after catching up.
    r.record(usageOf(user, { requestId: 'after' }));
    expect(r.inMemory).toBe(1);
    await r.close(Date.now() + 1000);
    // A clean stop removes the run's files (and the database's directory once no run is left).
    expect(existsSync(journal.dir) ? readdirSync(journal.dir).filter((f) => f.startsWith(journal.run)) : []).toEqual([]);
  });

  it('replays a crashed run at the next start: each event once, also a batch committed whose written mark never reached the disk', async () => {
    const user = await createAccount(gw, owner, { CreditGranted: 100 });
    const j1 = await UsageJournal.open(dir, await databaseId(db()), log);
    const r1 = new UsageRecorder(db(), log, { journal: j1, intervalMs: 60_000 });
    for (let i = 0; i < 30; i++) r1.record(usageOf(user, { creditUsed: 0.01, requestId: `a-${i}` }));
    await r1.flush();
    await j1.sync(); // the written mark is on disk
    for (let i = 0; i < 20; i++) r1.record(usageOf(user, { creditUsed: 0.01, requestId: `b-${i}` }));
    await j1.sync();
    await r1.flush(); // committed; its mark only pending
    for (let i = 0; i < 25; i++) r1.record(usageOf(user, { creditUsed: 0.01, requestId: `c-${i}` }));
    await j1.sync(); // journaled, never written
    crash(r1, j1);
    expect((await requestIds(user.id)).length).toBe(50);

    const written: number[] = [];
    const j2 = await UsageJournal.open(dir, await databaseId(db()), log);
    const r2 = new UsageRecorder(db(), log, { journal: j2, onWritten: (c) => written.push(c.get(user.id) ?? 0) });
    expect(await r2.replayOrphans()).toBe(25);
    const ids = await requestIds(user.id);
    expect(ids).toHaveLength(75);
    expect(ids.every((x) => x.n === 1)).toBe(true);
    expect(written.reduce((a, b) => a + b, 0)).toBeCloseTo(0.25, 9);
    expect(r2.pendingCredit(user.id)).toBe(0);
    // The orphan's files are gone; a second replay finds nothing.
    expect(readdirSync(j2.dir).filter((f) => f.startsWith(j1.run))).toEqual([]);
    expect(await r2.replayOrphans()).toBe(0);
    await r2.close();
  });

  it('leaves what a closing recorder could not write in the journal, and the next start writes it', async () => {
    const user = await createAccount(gw, owner, { CreditGranted: 100 });
    const j1 = await UsageJournal.open(dir, await databaseId(db()), log);
    const r1 = new UsageRecorder(switchable(() => true), log, { journal: j1 });
    for (let i = 0; i < 10; i++) r1.record(usageOf(user, { requestId: `t-${i}` }));
    await r1.close(Date.now() + 300);
    const r2 = new UsageRecorder(db(), log, { journal: await UsageJournal.open(dir, await databaseId(db()), log) });
    expect(await r2.replayOrphans()).toBe(10);
    expect(await requestIds(user.id)).toHaveLength(10);
    await r2.close();
  });

  it('does not claim a run whose process is alive', async () => {
    const id = await databaseId(db());
    const alive = await UsageJournal.open(dir, id, log);
    const other = await UsageJournal.open(dir, id, log);
    // Same pid as this test process counts as an earlier life; a live other pid does not.
    const { renameSync } = await import('node:fs');
    const marker = readdirSync(alive.dir).find((f) => f.startsWith(`${alive.run}.owner.`))!;
    const parent = process.ppid;
    renameSync(path.join(alive.dir, marker), path.join(alive.dir, marker.replace(`~${process.pid}~`, `~${parent}~`)));
    expect((await other.claimOrphans()).map((o) => o.run)).not.toContain(alive.run);
    await alive.close(true);
    await other.close(true);
  });
});
