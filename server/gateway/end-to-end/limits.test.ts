import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { expectEnvelope } from '../../testing/http';
import { balanceOf } from '../../state/credits/ledger';
import { accounts } from '../../adapters/storage/schema';
import { hello, secret, startProxyFixture, type ProxyFixture } from '../test-fixture';

let f: ProxyFixture;
const up = secret('limits');
beforeAll(async () => {
  f = await startProxyFixture();
  await f.addKey(1, up);
  await f.addKey(61, secret('level-61'));
  // Every answer reports 100 prompt + 50 completion tokens.
  f.mock.behave(up, { usage: { prompt_tokens: 100, completion_tokens: 50 } });
  // Invented model names are served (billed at a fallback): the price policy has tests of its own.
  await f.config({ MODEL_LIMITS: JSON.stringify({ 'owner-limited': { rpm: 1 } }), UNPRICED_MODEL_POLICY: 'bill:1,1' });
});
afterAll(async () => { await f?.close(); });

const chat = (key: string, model = 'gpt-4o', path = '/v1/chat/completions', extra: Record<string, unknown> = {}) => f.gw.as(key).post(path, { model, messages: hello, input: 'x', ...extra });

describe('access control', () => {
  it('refuses by AllowIPs (CIDR), Resources, AllowModels and AllowLevels with 403', async () => {
    const n = f.mock.requests.length;
    const outside = await f.account({ allowIps: '10.1.0.0/16 192.168.1.7' });
    expect(expectEnvelope(await chat(outside.key), 403).code).toBe('ip_not_allowed');
    const inside = await f.account({ allowIps: '10.1.0.0/16, 127.0.0.0/8' });
    expect((await chat(inside.key)).status).toBe(200);

    const embedOnly = await f.account({ resources: '/v1/embeddings' });
    expect(expectEnvelope(await chat(embedOnly.key), 403).code).toBe('resource_not_allowed');
    expect((await chat(embedOnly.key, 'text-embedding-3-small', '/embeddings')).status).toBe(200);

    const models = await f.account({ allowModels: 'gpt-4o* claude-*' });
    expect(expectEnvelope(await chat(models.key, 'o3'), 403).code).toBe('model_not_allowed');
    expect((await chat(models.key, 'gpt-4o-mini')).status).toBe(200);
    const none = await f.account({ allowModels: '-*' });
    expect(expectEnvelope(await chat(none.key), 403).code).toBe('model_not_allowed');

    const levels = await f.account({ level: 61, allowLevels: '1 2' });
    expect(expectEnvelope(await chat(levels.key), 403).code).toBe('level_not_allowed');
    const levelsOk = await f.account({ level: 61, allowLevels: '61' });
    expect((await chat(levelsOk.key)).status).toBe(200);
    expect(f.mock.requests.length - n).toBe(4);
  });

  it('applies the Owner RESOURCES allow-list to every account, the Owner included', async () => {
    const user = await f.account();
    await f.config({ RESOURCES: '/v1/chat/completions /v1/embeddings' });
    try {
      expect(expectEnvelope(await chat(user.key, 'gpt-4o', '/v1/responses'), 403).code).toBe('resource_not_allowed');
      expect(expectEnvelope(await chat(f.gw.rootKey, 'gpt-4o', '/responses'), 403).code).toBe('resource_not_allowed');
      expect((await chat(user.key)).status).toBe(200);
      expect((await chat(user.key, 'gpt-4o', '/chat/completions')).status).toBe(200);
    } finally {
      await f.config({ RESOURCES: '' });
    }
    expect((await chat(user.key, 'gpt-4o', '/v1/responses')).status).toBe(200);
  });

  it('answers 403 to a suspended account, 401 to a disabled one, and the SDK raises accordingly', async () => {
    const suspended = await f.account({ suspended: true });
    expect(expectEnvelope(await chat(suspended.key), 403).code).toBe('account_suspended');
    const err = await f.openai(suspended.key).chat.completions.create({ model: 'gpt-4o', messages: hello }).catch((e) => e);
    expect(err.constructor.name).toBe('PermissionDeniedError');
    const disabled = await f.account({ status: false });
    expect(expectEnvelope(await chat(disabled.key), 401).code).toBe('account_disabled');
  });
});

describe('rate limits', () => {
  const expectLimited = async (key: string, scope: string, limit: number, model = 'gpt-4o') => {
    const r = await chat(key, model);
    expect(expectEnvelope(r, 429).code).toBe('rate_limit_exceeded');
    expect(r.headers.get('x-ratelimit-scope')).toBe(scope);
    expect(r.headers.get('x-ratelimit-limit')).toBe(String(limit));
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // Retry-After: when this request fits; reset: when the whole budget is free again.
    expect(Number(r.headers.get('x-ratelimit-reset'))).toBeGreaterThanOrEqual(Number(r.headers.get('retry-after')));
    return r;
  };

  it('counts requests per rolling minute, hour and 24 hours (GCRA: a slot frees every window ÷ limit)', async () => {
    for (const [field, scope, windowSeconds] of [['rpm', 'RPM', 60], ['rph', 'RPH', 3600], ['rpd', 'RPD', 86_400]] as const) {
      const user = await f.account({ [field]: 2 });
      for (let i = 0; i < 2; i++) expect((await chat(user.key)).status).toBe(200);
      const r = await expectLimited(user.key, scope, 2);
      expect(r.headers.get('x-ratelimit-remaining')).toBe('0');
      const retry = Number(r.headers.get('retry-after'));
      const reset = Number(r.headers.get('x-ratelimit-reset'));
      expect(Math.abs(retry - windowSeconds / 2)).toBeLessThanOrEqual(2);
      expect(Math.abs(reset - windowSeconds)).toBeLessThanOrEqual(2);
      // Refused requests are not counted: it stays at the limit, not past it.
      expect((await f.usage(user.id))).toHaveLength(2);
    }
  });

  it('reserves tokens per minute, hour and 24 hours at admission and settles them to the usage of finished answers', async () => {
    for (const [field, scope] of [['tpm', 'TPM'], ['tph', 'TPH'], ['tpd', 'TPD']] as const) {
      const user = await f.account({ [field]: 320 });
      // Each call reserves 117 input (the request's bytes) + 50 output tokens; the answer uses 150.
      const small = { max_tokens: 50 };
      expect((await chat(user.key, 'gpt-4o', '/v1/chat/completions', small)).status).toBe(200); // 167 reserved, then 150 used
      expect((await chat(user.key, 'gpt-4o', '/v1/chat/completions', small)).status).toBe(200); // 150 + 167 ≤ 320; 300 after
      const r = await expectLimited(user.key, scope, 320);
      expect(r.body.error.message).toContain('reserves up to 320'); // no max_tokens: capped at the budget
      // Without max_tokens gpt-4o's output limit (16,384) is more than the whole budget: it waits for all of it.
      const fresh = await f.account({ [field]: 320 });
      expect((await chat(fresh.key)).status).toBe(200);
      await expectLimited(fresh.key, scope, 320);
    }
  });

  it('limits per model with the account ModelLimits, else the Owner MODEL_LIMITS', async () => {
    const user = await f.account({ modelLimits: { 'gpt-4o': { rpm: 1 }, 'cheap-*': { tpm: 100 } } });
    expect((await chat(user.key, 'gpt-4o')).status).toBe(200);
    await expectLimited(user.key, 'gpt-4o rpm', 1);
    expect((await chat(user.key, 'gpt-4o-mini')).status).toBe(200);
    expect((await chat(user.key, 'cheap-1')).status).toBe(200);
    await expectLimited(user.key, 'cheap-1 tpm', 100, 'cheap-1');
    expect((await chat(user.key, 'owner-limited')).status).toBe(200);
    await expectLimited(user.key, 'owner-limited rpm', 1, 'owner-limited');
    const err = await f.openai(user.key).chat.completions.create({ model: 'gpt-4o', messages: hello }).catch((e) => e);
    expect(err.constructor.name).toBe('RateLimitError');
  });
});

describe('balance and billing', () => {
  it('answers 402 when the balance less open reservations cannot hold a call\'s maximum cost above UserMinBalance', async () => {
    const poor = await f.account({ credit: 1 });
    const e = expectEnvelope(await chat(poor.key), 402);
    expect(e.code).toBe('insufficient_balance');
    await f.config({ PRICING: JSON.stringify({ ChatPricing: { pricey: { InputText: 10_000, OutputText: 0 } } }) });
    try {
      const user = await f.account({ credit: 4.03 });
      // 100 prompt tokens at 10,000 USD per million: 1 USD per call; each reserves 1.01 (the
      // request's 101 bytes bound its input). 4.03 → 3.03 → 2.03; a third would hold 2.03 − 1.01,
      // below the minimum of 2.
      for (let i = 0; i < 2; i++) expect((await chat(user.key, 'pricey')).status).toBe(200);
      const refused = expectEnvelope(await chat(user.key, 'pricey'), 402);
      expect(refused.code).toBe('insufficient_balance');
      expect(refused.message).toContain('maximum cost of 1.01');
      await f.usage(user.id);
      expect(await balanceOf(f.gw.gateway.database.db, user.id)).toBeCloseTo(2.03, 9);
    } finally {
      await f.config({ PRICING: '' });
    }
  });

  it('lets Root and Owners call without credit: they bring the keys', async () => {
    expect(await balanceOf(f.gw.gateway.database.db, 1)).toBe(0);
    expect((await chat(f.gw.rootKey)).status).toBe(200);
    const [row] = (await f.usage(1)).slice(-1);
    expect(row).toMatchObject({ model: 'gpt-4o', prompt: 100, completion: 50 });
  });

  it('bills default prices overridden by PRICING, times Rates and Factor, visible in /dashboard/live and /x-bill', async () => {
    await f.config({ PRICING: JSON.stringify({ ChatPricing: { 'gpt-4o': { OutputText: 20 } } }) });
    try {
      const user = await f.account({ rates: 2, factor: 1.5 });
      expect((await f.openai(user.key).chat.completions.create({ model: 'gpt-4o', messages: hello })).usage?.total_tokens).toBe(150);
      const expected = ((100 * 2.5 + 50 * 20) / 1e6) * 2 * 1.5;
      expect((await f.usage(user.id))[0].credit_used).toBeCloseTo(expected, 12);
      const live = await f.gw.as(user.key).get('/dashboard/live');
      expect(live.status).toBe(200);
      expect(live.body.daily_usage).toMatchObject({ Requests: 1, Prompt: 100, Completion: 50 });
      expect(live.body.daily_usage.CreditUsed).toBeCloseTo(expected, 9);
      expect(live.body.daily_usage.ModelUsage['gpt-4o'].Requests).toBe(1);
      const bill = await f.gw.root.get(`/x-bill?user=${user.id}`);
      expect(bill.status).toBe(200);
      expect(bill.body.usage_users[0]).toMatchObject({ id: user.id, total_requests: 1, top_cost_model: 'gpt-4o' });
      expect(bill.body.usage_users[0].total_credit_used).toBeCloseTo(expected, 9);
      const [row] = await f.gw.gateway.database.db.select({ rates: accounts.rates }).from(accounts).where(eq(accounts.id, user.id));
      expect(row.rates).toBe(2);
    } finally {
      await f.config({ PRICING: '' });
    }
  });
});
