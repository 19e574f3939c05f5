import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectEnvelope } from '../../testing/http';
import { spendableOf } from '../../state/credits/ledger';
import { costOf, priceFor, type TokenUsage } from '../../domain/pricing/cost';
import { counterKeys } from '../admission/store';
import { secret, startProxyFixture, type ProxyFixture } from '../test-fixture';

/**
 * Reservations that cover what a call can really cost, through a real gateway and the mock
 * upstream, on PGlite or on PostgreSQL with TEST_DATABASE_URL: clients that send no max_tokens
 * (as most SDK callers do), reasoning models, prompts in scripts of more than one byte a
 * character. Credit for about 20 real answers serves at most 21 of 100 calls sent at once,
 * and the balance never ends below the minimum: the overdraft does not grow with concurrency.
 */
const MIN_BALANCE = 2;
const CJK_PRICING = { 'cjk-model': { InputText: 100, OutputText: 1 } };
let f: ProxyFixture;

/** One scenario: a Level whose key answers with `usage`, and what such an answer costs. */
interface Scenario { level: number; model: string; usage: { prompt_tokens: number; completion_tokens: number; reasoning_tokens?: number }; content: string }
const SCENARIOS: Record<string, Scenario> = {
  'gpt-4o-mini answering 7,000 tokens': { level: 2, model: 'gpt-4o-mini', usage: { prompt_tokens: 30, completion_tokens: 7000 }, content: 'Write me a long story.' },
  'gpt-5 spending 40,000 hidden reasoning tokens': { level: 3, model: 'gpt-5', usage: { prompt_tokens: 30, completion_tokens: 40_500, reasoning_tokens: 40_000 }, content: 'Prove it.' },
  'a prompt of 3,000 Chinese characters': {
    level: 4, model: 'cjk-model', usage: { prompt_tokens: 4500, completion_tokens: 200 },
    content: '请帮我把下面这段很长的中文文本总结一下并且列出要点'.repeat(150).slice(0, 3000),
  },
};

const tokenUsage = (u: Scenario['usage']): TokenUsage => ({ prompt: u.prompt_tokens, completion: u.completion_tokens, reasoning: u.reasoning_tokens ?? 0, cached: 0, cacheWrite: 0 });
const realCost = (s: Scenario) => costOf(tokenUsage(s.usage), priceFor(s.model, { ChatPricing: CJK_PRICING }), 1, 1);

beforeAll(async () => {
  f = await startProxyFixture({ userMinBalance: MIN_BALANCE });
  for (const s of Object.values(SCENARIOS)) {
    const key = secret(`reserve-${s.level}`);
    await f.addKey(s.level, key);
    f.mock.behave(key, { usage: s.usage });
  }
  const small = secret('small');
  await f.addKey(5, small);
  f.mock.behave(small, { usage: { prompt_tokens: 10, completion_tokens: 10 } });
  await f.config({ PRICING: JSON.stringify({ ChatPricing: CJK_PRICING }) });
}, 60_000);
afterAll(async () => { await f?.close(); });

const chat = (key: string, body: Record<string, unknown>) => f.gw.as(key).post('/v1/chat/completions', body);
const db = () => f.gw.gateway.database.db;

describe('100 calls at once without max_tokens, against credit for about 20 real answers', () => {
  for (const [name, s] of Object.entries(SCENARIOS)) {
    it(`${name}: at most 21 served, the rest 402, every one billed, the balance never below the minimum`, async () => {
      const cost = realCost(s);
      const user = await f.account({ credit: MIN_BALANCE + 20 * cost, level: s.level });
      const answers = await Promise.all(Array.from({ length: 100 }, () => chat(user.key, { model: s.model, messages: [{ role: 'user', content: s.content }] })));
      const served = answers.filter((r) => r.status === 200).length;
      const refused = answers.filter((r) => r.status !== 200);
      expect(served).toBeGreaterThanOrEqual(1);
      expect(served).toBeLessThanOrEqual(21);
      for (const r of refused) expect(expectEnvelope(r, 402).code).toBe('insufficient_balance');
      const usage = await f.usage(user.id);
      expect(usage).toHaveLength(served);
      const billed = usage.reduce((sum, u) => sum + u.credit_used, 0);
      expect(billed).toBeCloseTo(served * cost, 9);
      // Every reservation covered its call, so no call took the account below its floor.
      expect(await spendableOf(db(), user.id)).toBeGreaterThanOrEqual(MIN_BALANCE - 1e-9);
      expect(f.gw.gateway.proxy.admission.credit(counterKeys.credit(user.ownerId, user.id))).toMatchObject({ reserved: 0 });
    }, 60_000);
  }
});

describe('the 402 of a call the balance cannot cover', () => {
  it('says what the call would need and the output limit that would fit; that limit is then served', async () => {
    const user = await f.account({ credit: MIN_BALANCE + 0.005, level: 5 });
    const body = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello there' }] };
    const refused = expectEnvelope(await chat(user.key, body), 402);
    expect(refused.code).toBe('insufficient_balance');
    // gpt-4o-mini's own output limit is what a call without max_tokens holds.
    expect(refused.message).toContain(' and 16384 output tokens');
    const fits = Number(/max_completion_tokens \(or max_tokens\) of (\d+) or less/.exec(refused.message)?.[1]);
    expect(fits).toBeGreaterThan(1000);
    expect(fits).toBeLessThan(16_384);
    expect((await chat(user.key, { ...body, max_tokens: fits + 100 })).status).toBe(402);
    expect((await chat(user.key, { ...body, max_tokens: fits })).status).toBe(200);
  });

  it('reserves the Owner\'s DEFAULT_OUTPUT_LIMIT for a model the catalogue gives no output limit', async () => {
    const user = await f.account({ credit: MIN_BALANCE + 0.001, level: 5 });
    const body = { model: 'cjk-model', messages: [{ role: 'user', content: 'hi' }] };
    expect(expectEnvelope(await chat(user.key, body), 402).message).toContain(' and 131072 output tokens');
    await f.config({ DEFAULT_OUTPUT_LIMIT: '500' });
    try {
      expect(expectEnvelope(await chat(user.key, body), 402).message).toContain(' and 500 output tokens');
    } finally {
      await f.config({ DEFAULT_OUTPUT_LIMIT: '' });
    }
    expect(expectEnvelope(await f.gw.root.put('/x-config', { DEFAULT_OUTPUT_LIMIT: 'many' }), 400).code).toBe('invalid_config_value');
    // The same setting through /x-conf, shown there as DefaultOutputLimit.
    expect((await f.gw.root.post('/x-conf', { DefaultOutputLimit: '2000' })).status).toBe(200);
    expect((await f.gw.root.get('/x-conf')).body.DefaultOutputLimit).toBe(2000);
    expect(expectEnvelope(await chat(user.key, body), 402).message).toContain(' and 2000 output tokens');
    expect(expectEnvelope(await f.gw.root.post('/x-conf', { DefaultOutputLimit: '0' }), 400).code).toBe('invalid_config_value');
    expect((await f.gw.root.post('/x-conf', { DefaultOutputLimit: '' })).status).toBe(200);
    expect((await f.gw.root.get('/x-config')).body.configs.DEFAULT_OUTPUT_LIMIT).toBe('');
  });
});

describe('MODEL_FAILOVER', () => {
  it('holds the dearest model of the chain: a fallback is billed at its own price', async () => {
    const body = { model: 'gpt-4o-mini', max_tokens: 1000, messages: [{ role: 'user', content: 'hi' }] };
    // 1,000 output tokens: 0.0006 on gpt-4o-mini, 0.01 on gpt-4o.
    const user = await f.account({ credit: MIN_BALANCE + 0.005, level: 5 });
    expect((await chat(user.key, body)).status).toBe(200);
    await f.config({ MODEL_FAILOVER: 'gpt-4o-mini=gpt-4o' });
    try {
      const refused = expectEnvelope(await chat(user.key, body), 402);
      expect(Number(/maximum cost of ([\d.]+)/.exec(refused.message)?.[1])).toBeGreaterThan(0.01);
    } finally {
      await f.config({ MODEL_FAILOVER: '' });
    }
    expect((await chat(user.key, body)).status).toBe(200);
  });
});

describe('the catalogue', () => {
  it('prices DeepSeek, Llama on Groq, Mistral and a dated Claude without PRICING, and still refuses a made-up model', async () => {
    const user = await f.account({ credit: 50, level: 5 });
    const usage = tokenUsage({ prompt_tokens: 10, completion_tokens: 10 });
    for (const model of ['deepseek-chat', 'llama-3.3-70b-versatile', 'mistral-large-latest', 'claude-sonnet-4-5-20250929']) {
      const r = await chat(user.key, { model, max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] });
      expect(r.status, model).toBe(200);
      const price = priceFor(model, {});
      expect(price.known).toBe(true);
      expect(price.InputText).toBeGreaterThan(0);
      const [row] = (await f.usage(user.id)).filter((u) => u.model === model);
      expect(row.credit_used).toBeCloseTo(costOf(usage, price, 1, 1), 12);
    }
    const made = expectEnvelope(await chat(user.key, { model: 'acme-made-up-1', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }), 403);
    expect(made.code).toBe('model_not_priced');
  });
});
