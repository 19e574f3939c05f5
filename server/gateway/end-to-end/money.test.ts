import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { expectEnvelope } from '../../testing/http';
import { standingOf } from '../../state/credits/ledger';
import type { AccountAlert } from '../../state/alerts/alerts';
import { estimateInputTokens } from '../../domain/pricing/estimate';
import { counterKeys, periodOf } from '../admission/store';
import { DatabaseBases } from '../admission/bases';
import { hello, secret, sleep, startProxyFixture, type ProxyFixture } from '../test-fixture';

/**
 * Money and limits through a real gateway and the mock upstream, on PGlite, or on PostgreSQL
 * with TEST_DATABASE_URL: reservations against concurrency, overdraft, spend caps, alerts,
 * token limits, release on failure and disconnect.
 */
let f: ProxyFixture;
const brokenSecret = secret('broken');
const slowSecret = secret('slow');
const heldSecret = secret('held');
const alerts: AccountAlert[] = [];
const METERED = JSON.stringify({ ChatPricing: { metered: { InputText: 0, OutputText: 10_000 } } });

beforeAll(async () => {
  // No minimum balance, so "credit for 20 calls" is exactly that.
  f = await startProxyFixture({ userMinBalance: 0 });
  await f.addKey(1, secret('money'));
  const exact = secret('exact');
  await f.addKey(7, exact);
  await f.addKey(8, brokenSecret);
  await f.addKey(9, slowSecret);
  await f.addKey(10, heldSecret);
  // 50 completion tokens at 10,000 USD per million (metered): 0.5 a call.
  f.mock.behave(exact, { usage: { prompt_tokens: 0, completion_tokens: 50 } });
  await f.config({ PRICING: METERED });
  f.gw.gateway.alerts.subscribe((a) => alerts.push(a));
}, 60_000);
afterAll(async () => { await f?.close(); });

const store = () => f.gw.gateway.proxy.admission;
const db = () => f.gw.gateway.database.db;
/** One call of the metered model allowing 50 output tokens: reserves 0.5 (input is free). */
const metered = (key: string, extra: Record<string, unknown> = {}) =>
  f.gw.as(key).post('/v1/chat/completions', { model: 'metered', messages: hello, max_tokens: 50, ...extra });
const usageTotal = async (accountId: number) => (await f.usage(accountId)).reduce((s, r) => s + r.credit_used, 0);

describe('credit reservations', () => {
  it('serves at most what the credit covers when 100 calls arrive at once, and bills every one served', async () => {
    const user = await f.account({ credit: 10, level: 7 }); // 20 calls of 0.5
    const before = await standingOf(db(), user.id);
    const answers = await Promise.all(Array.from({ length: 100 }, () => metered(user.key)));
    const served = answers.filter((r) => r.status === 200).length;
    const refused = answers.filter((r) => r.status === 402);
    expect(served).toBeLessThanOrEqual(21);
    expect(served).toBeGreaterThanOrEqual(19);
    expect(served + refused.length).toBe(100);
    expect(expectEnvelope(refused[0], 402).code).toBe('insufficient_balance');
    const billed = await usageTotal(user.id);
    expect((await f.usage(user.id))).toHaveLength(served);
    const after = await standingOf(db(), user.id);
    // Every served call is billed: what left the cards plus the overdraft is the usage.
    expect(before.cards - after.cards + after.overdraft - before.overdraft).toBeCloseTo(billed, 9);
    expect(billed).toBeCloseTo(served * 0.5, 9);
    expect(store().open).toBe(0);
    expect(store().credit(counterKeys.credit(user.ownerId, user.id))).toMatchObject({ reserved: 0 });
  });

  it('bills a call that costs more than its reservation and the balance in full: the overdraft, paid first by the next grant', async () => {
    const user = await f.account({ credit: 0.2, level: 7 });
    // Reserves 0.1 (10 output tokens), uses 50: 0.5 against 0.2 on the card.
    expect((await metered(user.key, { max_tokens: 10 })).status).toBe(200);
    expect(await usageTotal(user.id)).toBeCloseTo(0.5, 9);
    expect(await standingOf(db(), user.id)).toMatchObject({ cards: 0, overdraft: expect.closeTo(0.3, 9) });
    expect(expectEnvelope(await metered(user.key), 402).code).toBe('insufficient_balance');
    const shown = (await f.gw.root.get(`/x-users/${user.id}`)).body[0];
    expect(shown.Balance).toBeCloseTo(-0.3, 6);
    // The top-up pays the 0.3 first; the proxy sees the new balance at once.
    const top = await f.gw.root.put(`/x-users/${user.id}`, { CreditGranted: 1 });
    expect(top.status).toBe(200);
    expect(top.body.User.Balance).toBeCloseTo(0.7, 6);
    expect(await standingOf(db(), user.id)).toMatchObject({ cards: expect.closeTo(0.7, 9), overdraft: 0 });
    expect((await metered(user.key)).status).toBe(200);
  });

  it('releases the reservation when every upstream attempt fails', async () => {
    const user = await f.account({ credit: 1, level: 8 });
    f.mock.behave(brokenSecret, { status: 500 });
    const r = await metered(user.key);
    expect(r.status).toBeGreaterThanOrEqual(500);
    expect(store().credit(counterKeys.credit(user.ownerId, user.id))).toEqual({ spendable: 1, reserved: 0 });
    expect(store().open).toBe(0);
    expect(await f.usage(user.id)).toHaveLength(0);
  });

  it('releases the reservation when the client leaves before the answer', async () => {
    const user = await f.account({ credit: 1, level: 9 });
    f.mock.behave(slowSecret, { delayMs: 1500 });
    const abort = new AbortController();
    const call = fetch(`${f.gw.url}/v1/chat/completions`, {
      method: 'POST', signal: abort.signal,
      headers: { authorization: `Bearer ${user.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'metered', messages: hello, max_tokens: 50 }),
    }).catch((e) => e);
    const key = counterKeys.credit(user.ownerId, user.id);
    for (let i = 0; i < 50 && !(store().credit(key)?.reserved); i++) await sleep(20);
    expect(store().credit(key)!.reserved).toBeCloseTo(0.5, 9);
    abort.abort();
    await call;
    for (let i = 0; i < 150 && store().credit(key)!.reserved > 0; i++) await sleep(20);
    expect(store().credit(key)).toEqual({ spendable: 1, reserved: 0 });
    expect(await f.usage(user.id)).toHaveLength(0);
  });
});

describe('spend caps', () => {
  it('refuses at DailyLimit and at HardLimit, an ancestor\'s cap covering its descendants', async () => {
    const daily = await f.account({ credit: 50, level: 7, dailyLimit: 1.2 });
    expect((await metered(daily.key)).status).toBe(200);
    expect((await metered(daily.key)).status).toBe(200);
    const capped = expectEnvelope(await metered(daily.key), 402);
    expect(capped.code).toBe('daily_limit_reached');
    expect(capped.message).toContain('DailyLimit of 1.2');

    const parent = await f.account({ credit: 50, level: 7, hardLimit: 1.6 });
    const child = await f.account({ credit: 50, level: 7, parent });
    expect((await metered(parent.key)).status).toBe(200); // the parent's own 0.5
    expect((await metered(child.key)).status).toBe(200); // 1.0 for the subtree
    expect((await metered(child.key)).status).toBe(200); // 1.5
    const hard = expectEnvelope(await metered(child.key), 402);
    expect(hard.code).toBe('hard_limit_reached');
    expect(hard.message).toContain(`account #${parent.id} above this one`);
    expect(expectEnvelope(await metered(parent.key), 402).code).toBe('hard_limit_reached');
    // Raising the cap acts at once.
    expect((await f.gw.root.put(`/x-users/${parent.id}`, { HardLimit: 10 })).status).toBe(200);
    expect((await metered(child.key)).status).toBe(200);
  });

  it('loads period spend from usage_daily for the subtree, charged usage of the tenant only', async () => {
    const parent = await f.account({ credit: 50, level: 7 });
    const child = await f.account({ credit: 50, level: 7, parent });
    const other = await f.account({ credit: 50, level: 7 });
    for (const a of [parent, child, child, other]) expect((await metered(a.key)).status).toBe(200);
    expect((await f.gw.as(f.gw.rootKey).post('/v1/chat/completions', { model: 'metered', messages: hello, max_tokens: 50 })).status).toBe(200);
    await f.gw.gateway.usage.flush();
    const bases = new DatabaseBases(db(), f.gw.gateway.usage);
    const now = Date.now();
    const claim = (kind: 'day' | 'month') => ({
      key: 'k', accountId: parent.id, ownerId: parent.ownerId, dna: parent.dna, kind, ...periodOf(kind, now), cap: 1, code: 'daily_limit_reached' as const, alertAt: null,
    });
    expect(await bases.spend(claim('day'))).toBeCloseTo(1.5, 9);
    expect(await bases.spend(claim('month'))).toBeCloseTo(1.5, 9);
  });
});

describe('alerts', () => {
  it('raise SoftLimit and low balance once each, also under many concurrent calls', async () => {
    // USER_API_BALANCE (20) is the low-balance line: 21 of credit goes below it after 3 calls.
    const user = await f.account({ credit: 21, level: 7, softLimit: 2 });
    const answers = await Promise.all(Array.from({ length: 30 }, () => metered(user.key)));
    expect(answers.every((r) => r.status === 200)).toBe(true);
    await f.gw.gateway.alerts.settled();
    const mine = alerts.filter((a) => a.accountId === user.id);
    expect(mine.map((a) => a.kind).sort()).toEqual(['low_balance', 'soft_limit']);
    expect(mine.find((a) => a.kind === 'soft_limit')).toMatchObject({ period: periodOf('month', Date.now()).period, threshold: 2 });
    const rows = await f.gw.gateway.database.rows<{ kind: string }>(sql`select kind from account_alerts where account_id = ${user.id}`);
    expect(rows.map((r) => r.kind).sort()).toEqual(['low_balance', 'soft_limit']);
    expect(f.gw.logs.filter((l) => l.includes('"account_alert"') && l.includes(`"account":${user.id}`))).toHaveLength(2);
    // Once per period: more calls raise nothing more; a top-up starts a new low-balance period.
    expect((await metered(user.key)).status).toBe(200);
    await f.gw.root.put(`/x-users/${user.id}`, { CreditGranted: 1 });
    expect((await metered(user.key)).status).toBe(200);
    await f.gw.gateway.alerts.settled();
    expect(alerts.filter((a) => a.accountId === user.id).map((a) => a.kind).sort()).toEqual(['low_balance', 'low_balance', 'soft_limit']);
  });
});

describe('token limits', () => {
  it('hold under concurrency: the estimate is reserved at admission', async () => {
    const body = { model: 'gpt-4o', messages: hello, max_tokens: 50 };
    const estimate = estimateInputTokens(body) + 50;
    // The upstream holds each answer, so every admission is decided before any settle gives
    // tokens back (a refund may rightly let a later call in; that is not what this proves).
    f.mock.behave(heldSecret, { delayMs: 1500, usage: { prompt_tokens: 0, completion_tokens: 50 } });
    const user = await f.account({ credit: 50, level: 10, tpm: 1000 });
    const answers = await Promise.all(Array.from({ length: 20 }, () => f.gw.as(user.key).post('/v1/chat/completions', body)));
    const served = answers.filter((r) => r.status === 200).length;
    expect(served).toBe(Math.floor(1000 / estimate));
    const refused = answers.find((r) => r.status === 429)!;
    expect(refused.headers.get('x-ratelimit-scope')).toBe('TPM');
    const claim = { key: counterKeys.rate(user.ownerId, user.id, 'tpm'), name: 'TPM', kind: 'tokens' as const, windowMs: 60_000, limit: 1000 };
    // Each answer used 50 tokens (the mock reports no input): the difference went back at settle.
    expect(store().rateUsed(claim, Date.now())).toBeLessThanOrEqual(served * 50 + 1);
  });
});
