import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../testing/gateway';
import { freshDatabaseUrl } from '../../testing/database';
import { createAccount, rootAccount, usageOf, type TestAccount } from '../../testing/accounts';
import { balanceOf, grantCredit } from '../credits/ledger';
import { createLogger } from '../../core/log';
import type { Db } from '../../adapters/storage/database';
import { UsageRecorder } from './recorder';

let gw: TestGateway;
let owner: TestAccount;
let user: TestAccount;

beforeAll(async () => {
  gw = await startTestGateway({ tenancy: 'multi' });
  owner = await createAccount(gw, rootAccount(gw), { Role: 'owner', CreditGranted: 50 });
  user = await createAccount(gw, owner, { CreditGranted: 10 });
});
afterAll(async () => { await gw?.close(); });

const rows = <T = Record<string, unknown>>(q: ReturnType<typeof sql>) => gw.gateway.database.rows<T>(q);
const recordsOf = async (id: number) => Number((await rows<{ n: number }>(sql`select count(*)::int as n from usage_records where account_id = ${id}`))[0].n);
const dailyOf = (id: number) => rows<{ day: string; model: string; requests: number; prompt: string; completion: string; reasoning: string; cached: string; credit_used: string; dna: string; owner_id: number }>(
  sql`select day::text as day, model, requests, prompt, completion, reasoning, cached, credit_used, dna, owner_id from usage_daily where account_id = ${id} order by day, model`);
const db = () => gw.gateway.database.db;

describe('UsageRecorder on the gateway', () => {
  it('buffers without touching the database, then writes records, daily aggregates and the deduction in one flush', async () => {
    const sink = gw.gateway.usage;
    await sink.flush();
    const yesterday = new Date(Date.now() - 86_400_000);
    sink.record(usageOf(user, { model: 'gpt-4o', prompt: 1000, completion: 200, reasoning: 50, cached: 400, creditUsed: 0.75 }));
    sink.record(usageOf(user, { model: 'gpt-4o', prompt: 10, completion: 20, creditUsed: 0.25 }));
    sink.record(usageOf(user, { model: 'claude-sonnet-4-5', creditUsed: 1, at: yesterday }));
    // record() is synchronous: nothing can have been written yet.
    expect(sink.pendingCredit(user.id)).toBeCloseTo(2, 10);
    expect(await sink.flush()).toBeGreaterThanOrEqual(3);
    expect(sink.pendingCredit(user.id)).toBe(0);
    expect(await recordsOf(user.id)).toBe(3);
    const daily = await dailyOf(user.id);
    const today = new Date().toISOString().slice(0, 10);
    expect(daily).toHaveLength(2);
    const gpt = daily.find((d) => d.model === 'gpt-4o')!;
    expect(gpt).toMatchObject({ day: today, requests: 2, dna: user.dna, owner_id: owner.id });
    expect([gpt.prompt, gpt.completion, gpt.reasoning, gpt.cached].map(Number)).toEqual([1010, 220, 50, 400]);
    expect(Number(gpt.credit_used)).toBeCloseTo(1, 10);
    expect(daily.find((d) => d.model === 'claude-sonnet-4-5')).toMatchObject({ day: yesterday.toISOString().slice(0, 10), requests: 1 });
    expect(await balanceOf(db(), user.id)).toBeCloseTo(8, 10);
  });

  it('adds to the same (account, day, model) aggregate across flushes', async () => {
    const sink = gw.gateway.usage;
    sink.record(usageOf(user, { model: 'gpt-4o', prompt: 5, completion: 5, creditUsed: 0.5 }));
    await sink.flush();
    const gpt = (await dailyOf(user.id)).find((d) => d.model === 'gpt-4o')!;
    expect(gpt.requests).toBe(3);
    expect(Number(gpt.prompt)).toBe(1015);
    expect(Number(gpt.credit_used)).toBeCloseTo(1.5, 10);
    expect(await balanceOf(db(), user.id)).toBeCloseTo(7.5, 10);
  });

  it('records the usage of Root and Owners without charging them', async () => {
    const root = rootAccount(gw);
    await db().transaction((tx) => grantCredit(tx, root.id, 100, 30, 'test'));
    const sink = gw.gateway.usage;
    sink.record(usageOf(root, { creditUsed: 3 }));
    sink.record(usageOf(owner, { creditUsed: 4 }));
    expect(sink.pendingCredit(root.id)).toBe(0);
    expect(sink.pendingCredit(owner.id)).toBe(0);
    await sink.flush();
    expect(await recordsOf(root.id)).toBe(1);
    expect(Number((await dailyOf(owner.id))[0].credit_used)).toBe(4);
    expect(await balanceOf(db(), root.id)).toBe(100);
    expect(await balanceOf(db(), owner.id)).toBe(50);
  });

  it('never takes a card below zero, and still records the full usage', async () => {
    const poor = await createAccount(gw, owner, { CreditGranted: 2 });
    gw.gateway.usage.record(usageOf(poor, { creditUsed: 5 }));
    await gw.gateway.usage.flush();
    expect(await balanceOf(db(), poor.id)).toBe(0);
    expect(Number((await dailyOf(poor.id))[0].credit_used)).toBe(5);
  });

  it('writes on its timer without an explicit flush', async () => {
    const a = await createAccount(gw, owner, { CreditGranted: 5 });
    gw.gateway.usage.record(usageOf(a));
    const deadline = Date.now() + 5000;
    while ((await recordsOf(a.id)) === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(await recordsOf(a.id)).toBe(1);
  });

  it('keeps malformed values from blocking the batch', async () => {
    const a = await createAccount(gw, owner, { CreditGranted: 5 });
    gw.gateway.usage.record(usageOf(a, { prompt: 1e12, completion: -5, reasoning: Number.NaN, creditUsed: Number.POSITIVE_INFINITY, model: '', at: new Date('invalid') }));
    gw.gateway.usage.record({ ...usageOf(a), accountId: Number.NaN });
    await gw.gateway.usage.flush();
    const [d] = await dailyOf(a.id);
    expect(d).toMatchObject({ model: 'unknown', requests: 1 });
    expect([d.prompt, d.completion, d.reasoning, d.credit_used].map(Number)).toEqual([2_147_483_647, 0, 0, 0]);
    expect(gw.logs.some((l) => l.includes('usage_event_rejected'))).toBe(true);
  });

  it('writes every field of a record exactly, whatever characters the model and endpoint hold', async () => {
    const a = await createAccount(gw, owner, { CreditGranted: 5 });
    const at = new Date(Math.floor(Date.now() / 1000) * 1000 - 60_000 + 890); // a millisecond part the record must keep
    gw.gateway.usage.record(usageOf(a, { model: 'my,"odd"\nmodel\0 ü', endpoint: '/v1/x,"y"', level: null, keyId: 7, prompt: 3, completion: 4, reasoning: 1, cached: 2, creditUsed: 1.25e-7, status: 'abnormal', at }));
    await gw.gateway.usage.flush();
    const [r] = await rows<Record<string, unknown>>(sql`select model, endpoint, level, key_id, prompt, completion, reasoning, cached, credit_used::text as credit, status, created_at from usage_records where account_id = ${a.id}`);
    expect(r).toMatchObject({ model: 'my,"odd"\nmodel ü', endpoint: '/v1/x,"y"', level: null, key_id: 7, prompt: 3, completion: 4, reasoning: 1, cached: 2, status: 'abnormal' });
    expect(Number(r.credit)).toBeCloseTo(1.25e-7, 15);
    expect(new Date(String(r.created_at)).toISOString()).toBe(at.toISOString());
  });

  it('flushes through POST /x-conf SaveCache', async () => {
    const a = await createAccount(gw, owner, { CreditGranted: 5 });
    gw.gateway.usage.record(usageOf(a));
    const r = await gw.root.post('/x-conf', { SaveCache: true });
    expect(r.status).toBe(200);
    expect(r.body.flushedRecords).toBeGreaterThanOrEqual(0);
    expect(await recordsOf(a.id)).toBe(1);
  });
});

describe('UsageRecorder failures and batching', () => {
  /** The gateway's database, with its first `failures` transactions failing like a lost connection. */
  const flakyDb = (failures: number) => new Proxy(db(), {
    get(target, prop, receiver) {
      if (prop === 'transaction') {
        return (fn: any) => (failures-- > 0 ? Promise.reject(new Error('connection terminated unexpectedly')) : target.transaction(fn));
      }
      return Reflect.get(target, prop, receiver);
    },
  }) as Db;

  it('keeps a failed batch and writes it exactly once on the next attempt, logging without secrets', async () => {
    const logs: string[] = [];
    const rec = new UsageRecorder(flakyDb(2), createLogger((l) => logs.push(l), 'debug'), { intervalMs: 60_000 });
    const a = await createAccount(gw, owner, { CreditGranted: 5 });
    rec.record(usageOf(a, { creditUsed: 1 }));
    rec.record(usageOf(a, { creditUsed: 1, model: 'gpt-4o-mini' }));
    await expect(rec.flush()).rejects.toThrow(/connection/);
    await expect(rec.flush()).rejects.toThrow(/connection/);
    expect(rec.buffered).toBe(2);
    expect(rec.pendingCredit(a.id)).toBe(2);
    expect(await recordsOf(a.id)).toBe(0);
    expect(await rec.flush()).toBe(2);
    expect(await rec.flush()).toBe(0);
    expect(await recordsOf(a.id)).toBe(2);
    expect(rec.pendingCredit(a.id)).toBe(0);
    expect(await balanceOf(db(), a.id)).toBe(3);
    expect(logs.filter((l) => l.includes('usage_flush_failed'))).toHaveLength(2);
    expect(logs.some((l) => l.includes('usage_flush_recovered'))).toBe(true);
    expect(logs.join('\n')).not.toContain(a.key);
    await rec.close();
  });

  it('writes a batch once when its commit went through but the answer was lost, and tells onWritten once', async () => {
    // The commit happens; the client then sees the connection drop, as after a network cut.
    let lose = 1;
    const lossy = new Proxy(db(), {
      get(target, prop, receiver) {
        if (prop === 'transaction') {
          return async (fn: any) => {
            const out = await target.transaction(fn);
            if (lose-- > 0) throw new Error('connection terminated unexpectedly');
            return out;
          };
        }
        return Reflect.get(target, prop, receiver);
      },
    }) as Db;
    const logs: string[] = [];
    const written: Array<[number, number]> = [];
    const rec = new UsageRecorder(lossy, createLogger((l) => logs.push(l), 'debug'), {
      intervalMs: 60_000, onWritten: (charges) => written.push(...charges),
    });
    const a = await createAccount(gw, owner, { CreditGranted: 5 });
    rec.record(usageOf(a, { creditUsed: 1, requestId: 'req-one' }));
    rec.record(usageOf(a, { creditUsed: 0.5 }));
    await expect(rec.flush()).rejects.toThrow(/connection/);
    expect(rec.buffered).toBe(2);
    expect(await rec.flush()).toBe(2);
    expect(rec.buffered).toBe(0);
    expect(await recordsOf(a.id)).toBe(2);
    expect((await dailyOf(a.id))[0].requests).toBe(2);
    expect(await balanceOf(db(), a.id)).toBeCloseTo(3.5, 10);
    expect(written).toEqual([[a.id, 1.5]]);
    expect(logs.some((l) => l.includes('usage_batch_already_written'))).toBe(true);
    const ids = await rows<{ request_id: string }>(sql`select request_id from usage_records where account_id = ${a.id} order by request_id`);
    expect(ids.map((r) => r.request_id)).toContain('req-one');
    expect(new Set(ids.map((r) => r.request_id)).size).toBe(2);
    expect(ids.every((r) => typeof r.request_id === 'string' && r.request_id.length > 0)).toBe(true);
    await rec.close();
  });

  it('writes a full buffer at once, several transactions when it is large', async () => {
    const rec = new UsageRecorder(db(), createLogger(() => {}), { intervalMs: 60_000, batchSize: 5, maxPerTransaction: 2 });
    const a = await createAccount(gw, owner, { CreditGranted: 5 });
    for (let i = 0; i < 4; i++) rec.record(usageOf(a));
    await new Promise((r) => setTimeout(r, 100));
    expect(await recordsOf(a.id)).toBe(0);
    rec.record(usageOf(a));
    const deadline = Date.now() + 5000;
    while ((await recordsOf(a.id)) < 5 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(await recordsOf(a.id)).toBe(5);
    expect((await dailyOf(a.id))[0].requests).toBe(5);
    await rec.close();
  });

  it('on close, retries a database that is away (backing off) until it is back, within the deadline', async () => {
    const logs: string[] = [];
    const rec = new UsageRecorder(flakyDb(3), createLogger((l) => logs.push(l)), { intervalMs: 100 });
    const a = await createAccount(gw, owner, { CreditGranted: 5 });
    for (let i = 0; i < 4; i++) rec.record(usageOf(a, { creditUsed: 0.5 }));
    const started = Date.now();
    await rec.close(Date.now() + 10_000);
    // Three failures back off 200 + 400 + 800 ms before the fourth attempt writes.
    expect(Date.now() - started).toBeGreaterThanOrEqual(1400);
    expect(await recordsOf(a.id)).toBe(4);
    expect(await balanceOf(db(), a.id)).toBeCloseTo(3, 10);
    expect(logs.filter((l) => l.includes('usage_flush_failed'))).toHaveLength(3);
    expect(logs.some((l) => l.includes('usage_lost_on_shutdown'))).toBe(false);
  });

  it('on close, says what is lost only once the deadline has passed', async () => {
    const logs: string[] = [];
    const rec = new UsageRecorder(flakyDb(Number.POSITIVE_INFINITY), createLogger((l) => logs.push(l)), { intervalMs: 100 });
    const a = await createAccount(gw, owner, { CreditGranted: 5 });
    for (let i = 0; i < 3; i++) rec.record(usageOf(a));
    const started = Date.now();
    await rec.close(started + 1500);
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(1500);
    expect(took).toBeLessThan(3000);
    const lost = logs.filter((l) => l.includes('usage_lost_on_shutdown')).map((l) => JSON.parse(l));
    expect(lost).toHaveLength(1);
    expect(lost[0]).toMatchObject({ level: 'error', events: 3 });
    expect(lost[0].attempts).toBeGreaterThan(3);
    expect(await recordsOf(a.id)).toBe(0);
  });

  it('refuses events after close and says so', async () => {
    const logs: string[] = [];
    const rec = new UsageRecorder(db(), createLogger((l) => logs.push(l)), { intervalMs: 60_000 });
    await rec.close();
    rec.record(usageOf(user));
    expect(rec.buffered).toBe(0);
    expect(logs.some((l) => l.includes('usage_after_close'))).toBe(true);
  });
});

describe('graceful shutdown', () => {
  it('writes buffered usage before the database closes', async () => {
    const pg = process.env.TEST_DATABASE_URL ? await freshDatabaseUrl() : undefined;
    const dir = mkdtempSync(path.join(os.tmpdir(), 'sy-usage-'));
    const target = pg ? { databaseUrl: pg.url } : { databaseUrl: undefined, dataDir: dir };
    try {
      const first = await startTestGateway(target);
      const a = await createAccount(first, rootAccount(first), { CreditGranted: 5 });
      for (let i = 0; i < 3; i++) first.gateway.usage.record(usageOf(a, { creditUsed: 0.5 }));
      await first.close();
      const second = await startTestGateway({ ...target, rootKey: first.rootKey });
      try {
        const [{ n }] = await second.gateway.database.rows<{ n: number }>(sql`select count(*)::int as n from usage_records where account_id = ${a.id}`);
        expect(n).toBe(3);
        expect(await balanceOf(second.gateway.database.db, a.id)).toBeCloseTo(3.5, 10);
      } finally {
        await second.close();
      }
    } finally {
      await pg?.drop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000); // two on-disk PGlite start-ups (initdb, then reopen): slow on a busy machine
});
