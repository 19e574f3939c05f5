import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../testing/gateway';
import { expectEnvelope } from '../../testing/http';
import { createAccount, rootAccount, usageOf, type TestAccount } from '../../testing/accounts';
import { latencyBucket } from '../../../contract/dashboard/latency-buckets';
import type { UsageEvent } from '../../domain/usage/types';
import { addDays, today } from '../billing/period';

let gw: TestGateway;
let owner: TestAccount;
let u1: TestAccount;
let u2: TestAccount;
let u3: TestAccount;
const day = (n: number) => addDays(today(), -n);
const at = (n: number) => new Date(Date.parse(`${day(n)}T12:00:00Z`));
const KINDS = ['standard', 'anthropic', 'gemini', 'bedrock'];
const recorded: (UsageEvent & { account: TestAccount })[] = [];

/** Calls of known durations: log-uniform over the buckets, seeded, a few minutes long among them. */
function record(account: TestAccount, n: number, seed: number, fields: Partial<UsageEvent> = {}) {
  let s = seed;
  const next = () => ((s = (s * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
  for (let i = 0; i < n; i++) {
    const durationMs = Math.round(Math.exp(next() * Math.log(900_000)));
    const e = usageOf(account, {
      model: i % 3 === 0 ? 'claude-sonnet-4-5' : 'gpt-4o', keyKind: KINDS[i % KINDS.length], durationMs,
      firstByteMs: i % 4 === 3 ? undefined : Math.round(durationMs * next()), creditUsed: 0, ...fields,
    });
    recorded.push({ ...e, account });
    gw.gateway.usage.record(e);
  }
}

beforeAll(async () => {
  gw = await startTestGateway({ tenancy: 'multi' });
  owner = await createAccount(gw, rootAccount(gw), { Role: 'owner' });
  u1 = await createAccount(gw, owner, { CreditGranted: 200 });
  u2 = await createAccount(gw, owner, { CreditGranted: 5 });
  u3 = await createAccount(gw, u1, { CreditGranted: 5 });
  record(u1, 800, 3);
  record(u1, 200, 5, { at: at(2) });
  record(u3, 300, 11, { model: 'o3' });
  // The sibling's calls: slow and on a model of its own, so a leak would show.
  record(u2, 300, 17, { model: 'sibling-only', durationMs: 600_000 });
  record(owner, 50, 23);
  await gw.gateway.usage.flush();
  // Latency reads the rollup only: without the raw records the answers must not change.
  await gw.gateway.database.rows(sql`delete from usage_records`);
});
afterAll(async () => { await gw?.close(); });

const latency = async (key: string, query = '') => {
  const r = await gw.as(key).get(`/dashboard/latency${query}`);
  expect(r.status, r.text).toBe(200);
  return r.body;
};

/** Nearest rank, as the API estimates it. */
function truePercentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(1, Math.ceil(p * sorted.length)) - 1];
}
const withinOneBucket = (estimate: number, truth: number) => Math.abs(latencyBucket(estimate) - latencyBucket(truth)) <= 1;

function expectPercentiles(got: { p50: number | null; p90: number | null; p99?: number | null }, values: number[], what: string) {
  for (const [p, name] of [[0.5, 'p50'], [0.9, 'p90'], [0.99, 'p99']] as const) {
    const v = (got as Record<string, number | null | undefined>)[name];
    if (v === undefined) continue;
    const truth = truePercentile(values, p);
    expect(v, `${what} ${name}`).not.toBeNull();
    expect(withinOneBucket(v!, truth), `${what} ${name}: ${v} for ${truth}`).toBe(true);
  }
}

describe('GET /dashboard/latency', () => {
  it('answers today by default: per model and per key kind, percentiles within one bucket of the true ones', async () => {
    const r = await latency(u1.key);
    expect(r).toMatchObject({ object: 'latency_report', scope: 'own', start_date: today(), end_date: today(), requests: 800 });
    const mine = recorded.filter((e) => e.account === u1 && e.at.toISOString().startsWith(today()));
    expect(r.by_model.map((m: any) => m.model)).toEqual(['gpt-4o', 'claude-sonnet-4-5']);
    for (const m of r.by_model) {
      const calls = mine.filter((e) => e.model === m.model);
      expect(m.requests).toBe(calls.length);
      expect(m.first_byte_requests).toBe(calls.filter((e) => e.firstByteMs !== undefined).length);
      expectPercentiles(m.duration_ms, calls.map((e) => e.durationMs!), `${m.model} duration`);
      expectPercentiles(m.first_byte_ms, calls.flatMap((e) => (e.firstByteMs === undefined ? [] : [e.firstByteMs])), `${m.model} first byte`);
    }
    expect(r.by_key_kind.map((k: any) => k.key_kind).sort()).toEqual([...KINDS].sort());
    for (const k of r.by_key_kind) {
      const calls = mine.filter((e) => e.keyKind === k.key_kind);
      expect(k.requests).toBe(calls.length);
      expectPercentiles(k.duration_ms, calls.map((e) => e.durationMs!), `${k.key_kind} duration`);
    }
    // The "every 4th call is not streamed" kind has no first byte at all.
    expect(r.by_key_kind.find((k: any) => k.key_kind === 'bedrock')).toMatchObject({ first_byte_requests: 0, first_byte_ms: { p50: null, p90: null, p99: null } });
    expect(r.daily).toEqual([expect.objectContaining({ date: today(), timestamp: Date.parse(`${today()}T00:00:00Z`) / 1000, requests: 800 })]);
  });

  it('lists every day of the period for the chart, with p50 and p90 per day', async () => {
    const r = await latency(u1.key, '?days=4');
    expect(r).toMatchObject({ start_date: day(3), end_date: today(), requests: 1000 });
    expect(r.daily.map((d: any) => d.date)).toEqual([day(3), day(2), day(1), day(0)]);
    expect(r.daily[0]).toMatchObject({ requests: 0, duration_ms: { p50: null, p90: null }, first_byte_ms: { p50: null, p90: null } });
    const earlier = recorded.filter((e) => e.account === u1 && e.at.toISOString().startsWith(day(2)));
    expect(r.daily[1].requests).toBe(earlier.length);
    expectPercentiles(r.daily[1].duration_ms, earlier.map((e) => e.durationMs!), 'day 2 duration');
    expect(Object.keys(r.daily[1].duration_ms).sort()).toEqual(['p50', 'p90']);
    for (const q of [`?date=${day(2)}`, `?start=${day(2)}&end=${day(2)}`, `?s=${day(5)}&e=${day(1)}`]) expect((await latency(u1.key, q)).requests, q).toBe(200);
  });

  it('scope=subtree covers the caller and its descendants, never a sibling', async () => {
    const r = await latency(u1.key, '?scope=subtree');
    expect(r).toMatchObject({ scope: 'subtree', requests: 1100 });
    expect(r.by_model.map((m: any) => m.model).sort()).toEqual(['claude-sonnet-4-5', 'gpt-4o', 'o3']);
    const tree = recorded.filter((e) => (e.account === u1 || e.account === u3) && e.at.toISOString().startsWith(today()));
    expectPercentiles(r.by_model.find((m: any) => m.model === 'o3').duration_ms, tree.filter((e) => e.model === 'o3').map((e) => e.durationMs!), 'o3');
    for (const k of r.by_key_kind) expectPercentiles(k.duration_ms, tree.filter((e) => e.keyKind === k.key_kind).map((e) => e.durationMs!), k.key_kind);
    // The sibling's calls (all 600,000 ms) would show in the kinds' counts.
    expect(r.by_key_kind.reduce((n: number, k: any) => n + k.requests, 0)).toBe(1100);
    const ownerView = await latency(owner.key, '?scope=subtree');
    expect(ownerView.requests).toBe(50 + 800 + 300 + 300);
    expect(ownerView.by_model.map((m: any) => m.model)).toContain('sibling-only');
    // An Owner's own view is its own calls only.
    expect((await latency(owner.key)).requests).toBe(50);
  });

  it('scope=subtree without manage permission is 403; bad dates, scope or parameters are 400', async () => {
    expect(expectEnvelope(await gw.as(u2.key).get('/dashboard/latency?scope=subtree'), 403).code).toBe('manage_denied');
    // Its own latency needs no manage permission.
    expect((await latency(u2.key)).requests).toBe(300);
    // fixed-date: 2025-02-30 is a day no calendar has, refused whatever the clock says.
    for (const q of ['date=2025-02-30', 'date=yesterday', `start=${day(1)}&end=${day(3)}`, 'days=0', 'days=367', `end=${day(1)}`, `date=${today()}&days=2`, 'scope=everyone', 'user=1']) {
      expectEnvelope(await gw.as(u1.key).get(`/dashboard/latency?${q}`), 400);
    }
    expectEnvelope(await gw.as(null).get('/dashboard/latency'), 401);
  });
});
