import { describe, expect, it } from 'vitest';
import { MemoryAdmissionStore } from '../admission/memory-store';
import { FakeBases } from '../admission/store.contract';
import { counterKeys } from '../admission/store';
import { admit, type AdmissionDeps } from './admission';
import { accountRow, callFor } from './test-support';
import { DEFAULT_OUTPUT_LIMIT, estimateInputTokens, inputText, maxCostOf, modelLimits } from '../../domain/pricing/estimate';
import { countInputTokens, loadedEncodings, loadTextCounter } from '../../domain/pricing/token-count';
import { priceFor } from '../../domain/pricing/cost';
import { claudeCodeChat } from '../../testing/claude-code-request';

/**
 * The admission stage counting an OpenAI model's input with its tokenizer when the byte bound
 * alone refuses (the key-count half is proven end to end: end-to-end/input-count.test.ts).
 */
const MIN = 2;
const MODEL = 'gpt-4.1';

function deps(balance: number, id = 42) {
  const bases = new FakeBases();
  bases.credits.set(id, balance);
  const store = new MemoryAdmissionStore(bases, { refreshMs: 60_000 });
  const d: AdmissionDeps = { settings: { userMinBalance: MIN, userApiBalance: 0, upstreamTimeoutMs: 300_000 }, admission: store };
  return { d, store };
}

const body = claudeCodeChat(MODEL);
const price = priceFor(MODEL, {});
const limits = modelLimits(MODEL, DEFAULT_OUTPUT_LIMIT);
const raw = Buffer.from(JSON.stringify(body));
const byteInput = estimateInputTokens(body, raw, MODEL, limits.context);
const cost = (input: number) => maxCostOf(input, body.max_tokens, price, 1, 1);
const counted = async () => (await countInputTokens(inputText(body, MODEL, limits.context), await loadTextCounter('o200k_base'), limits.context))!;

describe('admission counting the input the byte bound alone refuses', () => {
  // First in the file: nothing has loaded a tokenizer yet in this module registry.
  it('loads no tokenizer for a call that fits by its bytes, nor for one no smaller input could pass', async () => {
    const { d } = deps(100);
    const c = callFor({ body });
    expect(await admit(d, c)).toBeNull();
    expect(c.reservation!.amount).toBeCloseTo(cost(byteInput), 12);
    // The balance covers the byte bound's input and some output, not the 32,000 output tokens asked: no
    // smaller input could pass, and the advice (a lower output limit) holds by the bytes already.
    const budget = maxCostOf(byteInput + 48, 1000, price, 1, 1);
    expect(cost(0)).toBeGreaterThan(budget);
    const poor = deps(MIN + budget, 43);
    const row = accountRow({ id: 43 });
    expect(await admit(poor.d, callFor({ row, body }))).toMatchObject({ status: 402, code: 'insufficient_balance' });
    const again = admit(poor.d, callFor({ row, body }));
    expect(again).not.toBeInstanceOf(Promise);
    expect(again).toMatchObject({ status: 402, code: 'insufficient_balance' });
    expect(loadedEncodings()).toEqual([]);
  });

  it('serves, at the counted bound, a call its bytes refused; refuses, naming the count, one even the count does not fit', async () => {
    const n = await counted();
    expect(n).toBeLessThan(byteInput / 3);
    const { d, store } = deps(MIN + (cost(n) + cost(byteInput)) / 2);
    const c = callFor({ body });
    expect(await admit(d, c)).toBeNull();
    expect(c.reservation).toMatchObject({ amount: cost(n), tokens: n + body.max_tokens });
    expect(store.credit(counterKeys.credit(1, 42))!.reserved).toBeCloseTo(cost(n), 12);

    const short = deps(MIN + cost(n) * 0.9, 44);
    const refused = await admit(short.d, callFor({ row: accountRow({ id: 44 }), body }));
    expect(refused).toMatchObject({ status: 402, code: 'insufficient_balance' });
    expect((refused as { message: string }).message).toContain(`maximum cost of ${Math.round(cost(n) * 1e6) / 1e6} `);
    expect((refused as { message: string }).message).toContain(`(up to ${n} input and ${body.max_tokens} output tokens); a lower output limit would fit`);
    expect(short.store.credit(counterKeys.credit(1, 44))!.reserved).toBe(0);
  });

  it('counts for a token limit too, and never for a request limit', async () => {
    const n = await counted();
    const { d } = deps(100);
    const row = accountRow({ tpm: n + body.max_tokens + 2000 });
    // 1,000 tokens in use: the byte bound (over the whole TPM) needs it all free; the count does not.
    expect(await admit(d, callFor({ row, body: { model: 'mistral-lg', max_tokens: 900, messages: [] } }))).toBeNull();
    const c = callFor({ row, body });
    expect(await admit(d, c)).toBeNull();
    expect(c.reservation!.tokens).toBe(n + body.max_tokens);
    const paced = deps(100, 45);
    const one = accountRow({ id: 45, rpm: 1 });
    expect(await admit(paced.d, callFor({ row: one, body }))).toBeNull();
    const second = admit(paced.d, callFor({ row: one, body }));
    expect(second).not.toBeInstanceOf(Promise);
    expect(second).toMatchObject({ status: 429 });
  });

  it('leaves a model without a tokenizer or a key to ask at its byte bound', async () => {
    const other = { ...body, model: 'mistral-large-latest' };
    const otherRaw = Buffer.from(JSON.stringify(other));
    const otherBytes = estimateInputTokens(other, otherRaw, other.model, modelLimits(other.model, DEFAULT_OUTPUT_LIMIT).context);
    const otherCost = (input: number) => maxCostOf(input, other.max_tokens, priceFor(other.model, {}), 1, 1);
    // Enough for its output and some input: counting would be tried, had the model a counter.
    const { d } = deps(MIN + (otherCost(0) + otherCost(otherBytes)) / 2);
    expect(await admit(d, callFor({ body: other }))).toMatchObject({ status: 402, message: expect.stringContaining(`(up to ${otherBytes} input`) });
  });
});
