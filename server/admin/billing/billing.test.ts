import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../testing/gateway';
import { expectEnvelope } from '../../testing/http';
import { createAccount, rootAccount, usageOf, type TestAccount } from '../../testing/accounts';
import { addDays, daysBetween, eachDay, resolvePeriod, today } from './period';

let gw: TestGateway;
let ownerA: TestAccount;
let u1: TestAccount;
let u2: TestAccount;
let u3: TestAccount;
let idle: TestAccount;
let ownerB: TestAccount;
let v: TestAccount;
const day = (n: number) => addDays(today(), -n);
const at = (n: number) => new Date(Date.parse(`${day(n)}T12:00:00Z`));

beforeAll(async () => {
  gw = await startTestGateway({ tenancy: 'multi' });
  const root = rootAccount(gw);
  ownerA = await createAccount(gw, root, { Role: 'owner' });
  u1 = await createAccount(gw, ownerA, { CreditGranted: 200, Level: 2 });
  u2 = await createAccount(gw, ownerA, { CreditGranted: 5, Level: 3 });
  // u1 pays for it; the Level (2) is inherited.
  u3 = await createAccount(gw, u1, { CreditGranted: 5 });
  idle = await createAccount(gw, ownerA, { CreditGranted: 5, Level: 2 });
  ownerB = await createAccount(gw, root, { Role: 'owner' });
  v = await createAccount(gw, ownerB, { CreditGranted: 50 });
  const s = gw.gateway.usage;
  s.record(usageOf(u1, { model: 'gpt-4o', prompt: 1000, completion: 100, cached: 300, reasoning: 10, creditUsed: 1 }));
  s.record(usageOf(u1, { model: 'gpt-4o', prompt: 500, completion: 50, creditUsed: 0.5 }));
  s.record(usageOf(u1, { model: 'claude-sonnet-4-5', prompt: 2000, completion: 400, creditUsed: 3 }));
  s.record(usageOf(u2, { model: 'gpt-4o-mini', prompt: 10, completion: 5, creditUsed: 0.2 }));
  s.record(usageOf(u3, { model: 'o3', prompt: 100, completion: 900, reasoning: 800, creditUsed: 2 }));
  s.record(usageOf(ownerA, { model: 'gpt-4o', creditUsed: 10 }));
  s.record(usageOf(v, { model: 'gpt-4o', creditUsed: 4 }));
  s.record(usageOf(u2, { model: 'gpt-4o', creditUsed: 1, at: at(1) }));
  s.record(usageOf(u1, { model: 'gpt-4o', prompt: 7, completion: 3, creditUsed: 5, at: at(10) }));
  s.record(usageOf(u1, { model: 'gpt-4o', creditUsed: 100, at: at(400) }));
  await s.flush();
  // Bills read the daily aggregates only: without the raw records they must not change.
  await gw.gateway.database.rows(sql`delete from usage_records`);
});
afterAll(async () => { await gw?.close(); });

const bill = async (key: string, path: string) => {
  const r = await gw.as(key).get(path);
  expect(r.status, `${path}: ${r.text}`).toBe(200);
  return r.body;
};

describe('GET /dashboard/bill', () => {
  it('answers today by default with every bill_info field', async () => {
    const b = await bill(u1.key, '/dashboard/bill');
    expect(Object.keys(b).sort()).toEqual(['daily_costs', 'end_date', 'object', 'start_date', 'token_summary', 'total_completion', 'total_credit_used', 'total_prompt', 'total_reasoning', 'total_requests', 'usage_summary']);
    expect(b).toMatchObject({ object: 'bill_info', start_date: today(), end_date: today(), total_requests: 3, total_prompt: 3500, total_completion: 550, total_reasoning: 10, total_credit_used: 4.5 });
    expect(b.token_summary).toEqual({ input_total: 3500, cached_input: 300, uncached_input: 3200, output_total: 550, reasoning_output: 10, processed_total: 4050 });
    expect(b.daily_costs).toHaveLength(1);
    expect(b.daily_costs[0]).toMatchObject({ date: today(), timestamp: Date.parse(`${today()}T00:00:00Z`) / 1000, total_requests: 3, total_prompt: 3500, total_completion: 550, total_credit_used: 4.5 });
    expect(b.daily_costs[0].line_items).toEqual([
      { name: 'claude-sonnet-4-5', cost: 3, usage: { requests: 1, prompt: 2000, completion: 400, reasoning: 0, cached: 0 } },
      { name: 'gpt-4o', cost: 1.5, usage: { requests: 2, prompt: 1500, completion: 150, reasoning: 10, cached: 300 } },
    ]);
    expect(b.usage_summary['gpt-4o']).toEqual({
      model_stats: { Requests: 2, Prompt: 1500, Completion: 150, Reasoning: 10, Cached: 300, CreditUsed: 1.5 },
      usage_analysis: { request_percentage: 66.67, cost_percentage: 33.33 },
    });
  });

  it('covers a day, a range or the last n days, every day listed', async () => {
    const last11 = await bill(u1.key, '/dashboard/bill?days=11');
    expect(last11).toMatchObject({ start_date: day(10), end_date: today(), total_requests: 4, total_credit_used: 9.5 });
    expect(last11.daily_costs.map((d: any) => d.date)).toEqual(Array.from({ length: 11 }, (_, i) => day(10 - i)));
    expect(last11.daily_costs[5]).toMatchObject({ total_requests: 0, total_credit_used: 0, line_items: [] });
    for (const q of [`date=${day(10)}`, `d=${day(10)}`, `start=${day(10)}&end=${day(2)}`, `s=${day(10)}&e=${day(2)}`, `start_date=${day(12)}&end_date=${day(9)}`]) {
      const b = await bill(u1.key, `/dashboard/bill?${q}`);
      expect(b.total_credit_used, q).toBe(5);
      expect(b.usage_summary['gpt-4o'].model_stats, q).toMatchObject({ Requests: 1, Prompt: 7, Completion: 3 });
    }
    expect((await bill(u1.key, `/dashboard/bill?start=${day(10)}`)).total_credit_used).toBe(9.5);
    expect((await bill(u1.key, '/dashboard/bill?days=366')).total_credit_used).toBe(9.5);
    expect((await bill(u1.key, `/dashboard/bill?date=${day(400)}`)).total_credit_used).toBe(100);
    expect((await bill(u1.key, `/dashboard/bill?date=${addDays(today(), 5)}`)).total_requests).toBe(0);
  });

  it('shows an Owner its own usage and nobody else\'s', async () => {
    expect((await bill(ownerA.key, '/dashboard/bill')).total_credit_used).toBe(10);
    expect((await bill(idle.key, '/dashboard/bill?days=30')).total_requests).toBe(0);
  });

  // fixed-date: dates that are no calendar day or lie outside 1970–9999, refused before any clock is read.
  it('answers bad dates and ranges with a 400 envelope', async () => {
    const bad = [
      'date=2025-02-30', 'date=2025-2-1', 'date=yesterday', 'date=', 'd=20250101', `date=${day(1)}&d=${day(1)}`, `date=${day(1)}&days=2`,
      `date=${day(1)}&start=${day(3)}`, `start=${day(1)}&end=${day(3)}`, `end=${day(1)}`, `start=${addDays(today(), 1)}`, `start=${day(367)}&end=${today()}`,
      `start=${day(400)}`, `s=${day(3)}&start=${day(3)}`, `e=${day(1)}&end_date=${day(1)}&start=${day(3)}`, 'days=0', 'days=367', 'days=-1', 'days=1.5', 'days=abc',
      `days=3&start=${day(3)}`, 'user=1', 'month=2025-01',
    ];
    for (const q of bad) expect(expectEnvelope(await gw.as(u1.key).get(`/dashboard/bill?${q}`), 400).code, q).toBe('invalid_request');
    // One message per bad value: the first check it fails.
    const message = async (q: string) => expectEnvelope(await gw.as(u1.key).get(`/dashboard/bill?${q}`), 400).message;
    expect(await message('date=yesterday')).toBe('date: must be a date in YYYY-MM-DD form');
    expect(await message('date=2025-02-30')).toBe('date: is not a calendar date');
    expect(await message('start=1969-12-31')).toBe('start: must be between 1970-01-01 and 9999-12-31');
    expectEnvelope(await gw.as(null).get('/dashboard/bill'), 401);
  });
});

describe('GET /x-bill', () => {
  it('sums every descendant but the caller, with usage_users sorted by credit', async () => {
    const b = await bill(ownerA.key, '/x-bill');
    expect(b).toMatchObject({ object: 'bill_info', start_date: today(), total_requests: 5, total_credit_used: 6.7, total_prompt: 3610, total_reasoning: 810 });
    expect(Object.keys(b.usage_summary).sort()).toEqual(['claude-sonnet-4-5', 'gpt-4o', 'gpt-4o-mini', 'o3']);
    expect(b.usage_users.map((u: any) => u.id)).toEqual([u1.id, u3.id, u2.id]);
    expect(b.usage_users[0]).toEqual({
      id: u1.id, name: u1.name, alias: u1.name, email: u1.email, dna: u1.dna, top_cost_model: 'claude-sonnet-4-5', top_request_model: 'gpt-4o',
      total_requests: 3, total_prompt: 3500, total_completion: 550, total_reasoning: 10, total_credit_used: 4.5,
      usage_analysis: { request_percentage: 60, cost_percentage: 67.16 },
    });
    const twoDays = await bill(ownerA.key, '/x-bill?days=2');
    expect(twoDays.total_credit_used).toBe(7.7);
    expect(twoDays.daily_costs.map((d: any) => d.total_credit_used)).toEqual([1, 6.7]);
    expect(twoDays.usage_users.find((u: any) => u.id === u2.id)).toMatchObject({ total_requests: 2, total_credit_used: 1.2, top_cost_model: 'gpt-4o', top_request_model: 'gpt-4o' });
    const root = await bill(gw.rootKey, '/x-bill');
    expect(root.total_credit_used).toBe(20.7);
    expect(root.usage_users.map((u: any) => u.id)).toEqual([ownerA.id, u1.id, v.id, u3.id, u2.id]);
  });

  it('filters by ID, name, email, DNA path or attribute, under either alias', async () => {
    const total = async (q: string) => (await bill(ownerA.key, `/x-bill?${q}`)).total_credit_used;
    for (const q of [`user=${u1.id}`, `u=${u1.id}`, `user=${u1.name}`, `u=${encodeURIComponent(u1.email.toUpperCase())}`]) expect(await total(q), q).toBe(4.5);
    expect(await total(`user=${u1.dna}`)).toBe(6.5);
    expect(await total(`user=${ownerA.dna}`)).toBe(6.7);
    expect(await total('user=L2')).toBe(6.5);
    expect(await total('u=l3&days=2')).toBe(1.2);
    expect(await total('user=R0')).toBe(6.7);
    expect(await total('user=G0')).toBe(6.7);
    expect(await total('user=T0')).toBe(6.7);
    expect(await total('user=F1')).toBe(6.7);
    expect(await bill(ownerA.key, '/x-bill?user=R1')).toMatchObject({ total_requests: 0, usage_users: [], usage_summary: {} });
    expect((await bill(ownerA.key, `/x-bill?user=${idle.id}&days=30`)).usage_users).toEqual([]);
    const single = await bill(ownerA.key, `/x-bill?user=${u3.id}&date=${today()}`);
    expect(single.usage_users).toHaveLength(1);
    expect(single.usage_users[0].usage_analysis).toEqual({ request_percentage: 100, cost_percentage: 100 });
  });

  it('needs manage permission, and a manager sees only its own subtree', async () => {
    expectEnvelope(await gw.as(u2.key).get('/x-bill'), 403);
    const b = await bill(u1.key, '/x-bill');
    expect(b.total_credit_used).toBe(2);
    expect(b.usage_users.map((u: any) => u.id)).toEqual([u3.id]);
    // A sibling is out of scope for a subaccount: 403, the same answer as for an account nobody has.
    expect(expectEnvelope(await gw.as(u1.key).get(`/x-bill?user=${u2.id}`), 403)).toEqual(expectEnvelope(await gw.as(u1.key).get('/x-bill?user=2000000000'), 403));
    expect(expectEnvelope(await gw.as(u1.key).get(`/x-bill?user=${u2.id}`), 403).code).toBe('out_of_scope');
  });

  it('is 404 to an Owner for an unknown account or one of another tenant, 400 for the caller itself and bad input', async () => {
    const a = gw.as(ownerA.key);
    for (const q of [`user=${v.id}`, `user=${ownerB.name}`, `user=${ownerB.dna}`, 'user=1', 'user=.1.']) expect(expectEnvelope(await a.get(`/x-bill?${q}`), 404).code, q).toBe('not_found');
    for (const q of ['user=99999999', 'user=99999999999999', 'user=no-such-account', 'user=ghost@example.test', `user=${ownerA.dna}999999.`]) expectEnvelope(await a.get(`/x-bill?${q}`), 404);
    // fixed-date: month 13 is no date at all.
    const bad = [
      `user=${ownerA.id}`, `user=${ownerA.name}`, `user=${u1.id}&u=${u1.id}`, 'user=.1.x.', 'user=.', 'user=R7', 'user=', 'u=%20',
      `user=${'x'.repeat(321)}`, 'date=2025-13-01', 'days=400', `start=${day(1)}&end=${day(5)}`, 'x=1', `user=${u1.id}&user=${u2.id}`,
    ];
    for (const q of bad) expect(expectEnvelope(await a.get(`/x-bill?${q}`), 400).message.length, q).toBeGreaterThan(0);
    expectEnvelope(await gw.as(null).get('/x-bill'), 401);
  });
});

// fixed-date: resolvePeriod is given its `now`; a leap day and a month's end on purpose.
describe('resolvePeriod', () => {
  it('counts UTC days across month and leap-year boundaries', () => {
    const now = new Date('2024-03-01T23:59:59Z');
    expect(resolvePeriod({}, now)).toEqual({ start: '2024-03-01', end: '2024-03-01' });
    expect(resolvePeriod({ days: 2 }, now)).toEqual({ start: '2024-02-29', end: '2024-03-01' });
    expect(resolvePeriod({ days: 366 }, now)).toEqual({ start: '2023-03-02', end: '2024-03-01' });
    expect(resolvePeriod({ start: '2023-03-02', end: '2024-03-01' }, now)).toEqual({ start: '2023-03-02', end: '2024-03-01' });
    expect(() => resolvePeriod({ start: '2023-03-01', end: '2024-03-01' }, now)).toThrow(/367 days/);
  });
});

// fixed-date: pure functions at the calendar's ends (1970-01-01, 9999-12-31) and across a leap day; no clock.
describe('eachDay', () => {
  it('counts the days instead of comparing them, so the last day of the calendar ends the list', () => {
    expect(eachDay({ start: '9999-12-31', end: '9999-12-31' })).toEqual(['9999-12-31']);
    expect(eachDay({ start: '9999-12-29', end: '9999-12-31' })).toEqual(['9999-12-29', '9999-12-30', '9999-12-31']);
    expect(eachDay({ start: '9998-12-31', end: '9999-12-31' })).toHaveLength(366);
    expect(eachDay({ start: '2024-02-28', end: '2024-03-01' })).toEqual(['2024-02-28', '2024-02-29', '2024-03-01']);
    expect(daysBetween('1970-01-01', '9999-12-31')).toBe(2_932_897);
  });

  it('refuses a period it was never meant to list instead of looping', () => {
    for (const p of [
      { start: '9998-12-30', end: '9999-12-31' }, { start: '1970-01-01', end: '9999-12-31' }, { start: '2025-01-02', end: '2025-01-01' },
      { start: 'soon', end: '2025-01-01' }, { start: '2025-01-01', end: '+010000-01-01' },
    ]) expect(() => eachDay(p), JSON.stringify(p)).toThrow(RangeError);
  });

  it('leaves resolvePeriod no range beyond 366 days, even from dates the schema did not check', () => {
    const now = new Date('2025-06-01T00:00:00Z');
    expect(() => resolvePeriod({ start: '1999-99-99', end: '2025-01-01' }, now)).toThrow(/at most 366/);
    expect(resolvePeriod({ date: '9999-12-31' }, now)).toEqual({ start: '9999-12-31', end: '9999-12-31' });
  });
});
