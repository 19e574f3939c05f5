/**
 * The prices GET /dashboard/models lists are the ones a call is billed at: two accounts whose
 * Rates and Factor differ see prices that differ by exactly them, and a real call through the
 * gateway and the mock upstream costs the listed prices × its tokens.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hello, keyedUser, startProxyFixture, type ProxyFixture } from '../../gateway/test-fixture';
import type { TestAccount } from '../../testing/accounts';
import { defaultPrice } from '../../domain/pricing/cost';

let f: ProxyFixture;
const MODEL = 'priced-test';
// The model's own Rates (1.5) applies on top of the account's.
const PRICE = { InputText: 2.5, CachedText: 1.25, OutputText: 10, Rates: 1.5 };
const PER_CALL = 0.01;

beforeAll(async () => {
  f = await startProxyFixture();
  await f.config({
    PRICING: JSON.stringify({ ChatPricing: { [MODEL]: PRICE }, CallPricing: { 'acme-lookup': { Call: PER_CALL } } }),
    MODEL_MAPPER: `alias-test=${MODEL}, house=house-model`,
  });
});
afterAll(async () => { await f?.close(); });

const list = async (key: string) => {
  const r = await f.gw.as(key).get('/dashboard/models');
  expect(r.status).toBe(200);
  return Object.fromEntries(r.body.data.map((m: any) => [m.id, m]));
};

describe('model prices after the caller\'s Rates and Factor', () => {
  let plain: TestAccount;
  let dear: Awaited<ReturnType<typeof keyedUser>>;
  beforeAll(async () => {
    plain = await f.account();
    // Rates 2 and Factor 0.75: every price 1.5 times the plain account's.
    dear = await keyedUser(f, 'model-prices', { rates: 2, factor: 0.75 });
  });

  it('lists each model\'s prices per million tokens, and two accounts\' differ exactly by their Rates × Factor', async () => {
    const [a, b] = [await list(plain.key), await list(dear.user.key)];
    expect(a[MODEL].pricing).toEqual({ billed_as: MODEL, input: 3.75, output: 15, cached_input: 1.875 });
    for (const id of [MODEL, 'gpt-4o', 'gpt-4o-mini', 'claude-sonnet-4-5', 'gemini-2.5-pro']) {
      for (const k of ['input', 'output', 'cached_input']) expect(b[id].pricing[k]).toBeCloseTo(a[id].pricing[k] * 2 * 0.75, 12);
    }
    expect(b[MODEL].pricing.input).toBeCloseTo(2.5 * 1.5 * 2 * 0.75, 12);
    // The catalogue's own classes: a cache-write price for Claude, long-context prices for Gemini 2.5 Pro.
    const claude = defaultPrice('claude-sonnet-4-5')!;
    expect(a['claude-sonnet-4-5'].pricing).toMatchObject({ input: claude.InputText, output: claude.OutputText, cached_input: claude.CachedText, cache_write: claude.CacheWrite });
    expect(b['claude-sonnet-4-5'].pricing.cache_write).toBeCloseTo(claude.CacheWrite! * 1.5, 12);
    const tier = a['gemini-2.5-pro'].pricing.long_context[0];
    expect(tier.above).toBe(200_000);
    expect(tier.input).toBeGreaterThan(a['gemini-2.5-pro'].pricing.input);
    expect(b['gemini-2.5-pro'].pricing.long_context[0].input).toBeCloseTo(tier.input * 1.5, 12);
  });

  it('prices a mapped name as the model it is billed as, a per-call model per call, and an unpriced one as null', async () => {
    const [a, b] = [await list(plain.key), await list(dear.user.key)];
    expect(a['alias-test'].pricing).toEqual({ ...a[MODEL].pricing, billed_as: MODEL });
    expect(a['acme-lookup'].pricing).toEqual({ billed_as: 'acme-lookup', input: null, output: null, cached_input: null, call: PER_CALL });
    expect(b['acme-lookup'].pricing.call).toBeCloseTo(PER_CALL * 1.5, 12);
    // UNPRICED_MODEL_POLICY refuses by default: no price, not a price of 0.
    expect(a.house.pricing).toBeNull();
    expect(a['house-model'].pricing).toBeNull();
  });

  it('maps with the ancestors\' ModelMappers as a call does', async () => {
    const parent = await f.account({ modelMapper: `gpt-4o-mini=${MODEL}` });
    const child = await f.account({ parent });
    expect((await list(child.key))['gpt-4o-mini'].pricing).toEqual({ ...(await list(plain.key))[MODEL].pricing, billed_as: MODEL });
  });

  it('bills a real call at the listed prices × its tokens', async () => {
    // 1,000 in (200 from the cache), 300 out.
    f.mock.behave(dear.up, { usage: { prompt_tokens: 1000, completion_tokens: 300, cached_tokens: 200 } });
    const answer = await dear.client.chat.completions.create({ model: 'alias-test', messages: hello });
    expect(answer.usage).toMatchObject({ prompt_tokens: 1000, completion_tokens: 300 });
    const p = (await list(dear.user.key))['alias-test'].pricing;
    const [row] = await f.usage(dear.user.id);
    expect(row).toMatchObject({ model: MODEL, prompt: 1000, completion: 300, cached: 200 });
    expect(row.credit_used).toBeCloseTo((800 * p.input + 200 * p.cached_input + 300 * p.output) / 1e6, 12);
    expect(row.credit_used).toBeGreaterThan(0);
  });

  it('lists UNPRICED_MODEL_POLICY\'s fallback prices when it bills unpriced models', async () => {
    await f.config({ UNPRICED_MODEL_POLICY: 'bill:1,4' });
    const b = await list(dear.user.key);
    expect(b['house-model'].pricing).toMatchObject({ billed_as: 'house-model', fallback: true, input: 1.5, output: 6, cached_input: 1.5 });
    await f.config({ UNPRICED_MODEL_POLICY: 'refuse' });
    expect((await list(dear.user.key))['house-model'].pricing).toBeNull();
  });
});
