import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../testing/gateway';
import { createAccount, rootAccount, usageOf, type TestAccount } from '../../testing/accounts';
import { createLogger } from '../../core/log';
import { ancestorIdsOf } from '../../domain/accounts/dna';
import type { UsageEvent } from '../../domain/usage/types';
import { LATENCY_BOUNDS_MS, LATENCY_BUCKETS, latencyBucket } from '../../../contract/dashboard/latency-buckets';
import { writeBatch } from './batch-write';
import { recordWriterFor } from './record-writers';
import { encodeEvent, parseLine } from './journal';

/**
 * usage_latency_daily against the records it was written with: every bucket of every
 * (account, own/below, day, model, key kind) equal to the histogram of the raw records, once
 * however often the batch is written.
 */

let gw: TestGateway;
let owner: TestAccount;
let u1: TestAccount;
let u2: TestAccount;
let u3: TestAccount;
let other: TestAccount;
const quiet = createLogger(() => {}, 'error');
/** Key IDs stand for key kinds here: records keep the key's ID, the rollup its kind. */
const KIND_OF_KEY: Record<number, string> = { 11: 'standard', 12: 'anthropic', 13: 'gemini', 14: 'bedrock' };
const MODELS = ['gpt-4o', 'claude-sonnet-4-5', 'gemini-2.5-pro'];

beforeAll(async () => {
  gw = await startTestGateway({ tenancy: 'multi' });
  const root = rootAccount(gw);
  owner = await createAccount(gw, root, { Role: 'owner' });
  u1 = await createAccount(gw, owner, { CreditGranted: 50 });
  u2 = await createAccount(gw, owner, { CreditGranted: 5 });
  u3 = await createAccount(gw, u1, { CreditGranted: 5 });
  other = await createAccount(gw, root, { Role: 'owner' });
});
afterAll(async () => { await gw?.close(); });

/** A seeded generator: the same calls on every run, spread over every bucket. */
function calls(n: number, seed: number): UsageEvent[] {
  let s = seed;
  const next = () => ((s = (s * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
  const who = [owner, u1, u2, u3, other];
  const yesterday = Date.now() - 86_400_000;
  return Array.from({ length: n }, (_, i) => {
    const keyId = 11 + Math.floor(next() * 4);
    // Log-uniform from under 1 ms to past the last bound, plus exact bounds now and then.
    const durationMs = i % 17 === 0 ? LATENCY_BOUNDS_MS[i % LATENCY_BOUNDS_MS.length] : Math.exp(next() * Math.log(LATENCY_BOUNDS_MS.at(-1)! * 2)) - 1;
    const streamed = next() < 0.7;
    return usageOf(who[i % who.length], {
      model: MODELS[Math.floor(next() * MODELS.length)], keyId, keyKind: KIND_OF_KEY[keyId], durationMs: Math.round(durationMs),
      firstByteMs: streamed ? Math.round(durationMs * next()) : undefined, creditUsed: 0, at: new Date(i % 3 === 0 ? yesterday : Date.now()),
    });
  });
}

const write = (id: string, events: UsageEvent[]) => gw.gateway.database.db.transaction((tx) => writeBatch(tx, { id, events }, recordWriterFor(gw.gateway.database.kind), quiet));

type Hist = { requests: number; duration: number[]; firstByte: number[] };
/** The rollup as the raw records say it should be. */
async function expectedFromRecords(): Promise<Map<string, Hist>> {
  const records = await gw.gateway.database.rows<{ account_id: number; dna: string; day: string; model: string; key_id: number; duration_ms: number | null; first_byte_ms: number | null }>(sql`
    select r.account_id, a.dna, (r.created_at at time zone 'UTC')::date::text as day, r.model, r.key_id, r.duration_ms, r.first_byte_ms
    from usage_records r join accounts a on a.id = r.account_id`);
  const out = new Map<string, Hist>();
  const add = (key: string, d: number, f: number | null) => {
    let h = out.get(key);
    if (!h) out.set(key, (h = { requests: 0, duration: new Array(LATENCY_BUCKETS).fill(0), firstByte: new Array(LATENCY_BUCKETS).fill(0) }));
    h.requests++;
    h.duration[latencyBucket(d)]++;
    if (f !== null) h.firstByte[latencyBucket(f)]++;
  };
  for (const r of records) {
    if (r.duration_ms === null) continue;
    const tail = `${r.day}|${r.model}|${KIND_OF_KEY[r.key_id]}`;
    add(`${r.account_id}|own|${tail}`, r.duration_ms, r.first_byte_ms);
    for (const a of ancestorIdsOf(r.dna)) add(`${a}|below|${tail}`, r.duration_ms, r.first_byte_ms);
  }
  return out;
}

async function rollup(): Promise<Map<string, Hist>> {
  const rows = await gw.gateway.database.rows<{ account_id: number; whose: string; day: string; model: string; key_kind: string; requests: string | number; duration_buckets: (string | number)[]; first_byte_buckets: (string | number)[] }>(
    sql`select account_id, whose, day::text as day, model, key_kind, requests, duration_buckets, first_byte_buckets from usage_latency_daily`);
  return new Map(rows.map((r) => [`${r.account_id}|${r.whose}|${r.day}|${r.model}|${r.key_kind}`, {
    requests: Number(r.requests), duration: r.duration_buckets.map(Number), firstByte: r.first_byte_buckets.map(Number),
  }]));
}

describe('usage_latency_daily', () => {
  it('holds the histograms of the records written, per account and per ancestor, and a replayed batch adds nothing', async () => {
    const first = calls(1500, 7);
    await write('latency-a', first);
    // A second batch meets the first one's rows: histograms merged bucket by bucket.
    await write('latency-b', calls(900, 99));
    const expected = await expectedFromRecords();
    const got = await rollup();
    expect(expected.size).toBeGreaterThan(40);
    expect(new Set(got.keys())).toEqual(new Set(expected.keys()));
    for (const [k, h] of expected) expect(got.get(k), k).toEqual(h);
    // Streamed calls and the others: the first-byte histogram counts fewer calls than the duration one.
    const ownerBelow = [...got].filter(([k]) => k.startsWith(`${owner.id}|below|`)).map(([, h]) => h);
    const firstBytes = ownerBelow.reduce((n, h) => n + h.firstByte.reduce((a, b) => a + b, 0), 0);
    const calls_ = ownerBelow.reduce((n, h) => n + h.requests, 0);
    expect(firstBytes).toBeGreaterThan(0);
    expect(firstBytes).toBeLessThan(calls_);
    // Another tenant's calls never reach this tenant's rows (only Root's).
    expect([...got.keys()].filter((k) => k.startsWith(`${owner.id}|`)).length).toBeGreaterThan(0);
    expect(ancestorIdsOf(other.dna)).not.toContain(owner.id);

    // The same batch again (a retry after a lost commit answer, or a journal replay): nothing twice.
    await write('latency-a', first);
    expect(await rollup()).toEqual(got);
  });

  it('leaves out a record without a duration and keeps a kind-less one under unknown', async () => {
    const before = await rollup();
    await write('latency-c', [
      usageOf(u2, { model: 'gpt-4o (no time)', creditUsed: 0 }),
      usageOf(u2, { model: 'gpt-4o (old line)', creditUsed: 0, durationMs: 5, keyId: 11 }),
    ]);
    const after = await rollup();
    const added = [...after.keys()].filter((k) => !before.has(k));
    const day = new Date().toISOString().slice(0, 10);
    expect(added.sort()).toEqual([`${owner.id}|below|${day}|gpt-4o (old line)|unknown`, `${u2.id}|own|${day}|gpt-4o (old line)|unknown`, `${rootAccount(gw).id}|below|${day}|gpt-4o (old line)|unknown`].sort());
  });

  it('journal lines keep the key kind, and lines from before it decode without one', () => {
    const e = usageOf(u1, { durationMs: 12, firstByteMs: 3, keyId: 14, keyKind: 'bedrock' });
    const line = parseLine(encodeEvent(5, e).trim());
    expect(line).toMatchObject({ kind: 'event', seq: 5, event: { keyKind: 'bedrock', durationMs: 12, firstByteMs: 3, keyId: 14 } });
    const plain = parseLine(encodeEvent(6, { ...e, keyKind: undefined }).trim());
    expect(plain && plain.kind === 'event' && 'keyKind' in plain.event).toBe(false);
    // A batch's line with a kind keeps both.
    const batch = parseLine(encodeEvent(7, { ...e, batchId: 'b1', batchLines: 3 }).trim());
    expect(batch).toMatchObject({ event: { keyKind: 'bedrock', batchId: 'b1', batchLines: 3 } });
  });
});
