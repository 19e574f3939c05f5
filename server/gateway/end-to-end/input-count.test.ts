/**
 * Input held at what it can be (issue 30): a Claude-Code-sized request (about 115 KB of a long
 * system prompt and many tools) from an account with a few dollars, whose byte bound alone holds
 * about four times its real input. Through a real gateway, the real SDKs and the mock upstream:
 * an OpenAI model's input counted with its tokenizer, a Claude model's by the Anthropic key's
 * (or the Vertex-Claude key's) own count_tokens; served where the bytes alone refused, held at
 * exactly the counted bound, billed the provider's usage; still refused, naming the count, when
 * even the count does not fit; and a count that never answers ends in the byte bound's refusal
 * after the deadline, not in a hung call.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKeyPairSync } from 'node:crypto';
import { expectEnvelope } from '../../testing/http';
import { spendableOf } from '../../state/credits/ledger';
import { costOf, priceFor } from '../../domain/pricing/cost';
import { DEFAULT_OUTPUT_LIMIT, estimateInputTokens, inputText, maxCostOf, modelLimits } from '../../domain/pricing/estimate';
import { countedBound, countInputTokens, loadTextCounter } from '../../domain/pricing/token-count';
import { countedInputTokens } from '../../testing/mock-upstream/anthropic';
import { claudeCodeChat, claudeCodeMessages } from '../../testing/claude-code-request';
import { counterKeys } from '../admission/store';
import { secret, sleep, startProxyFixture, type ProxyFixture } from '../test-fixture';
import type { TestAccount } from '../../testing/accounts';

const MIN = 1;
let f: ProxyFixture;
beforeAll(async () => { f = await startProxyFixture({ userMinBalance: MIN }); });
afterAll(async () => { await f?.close(); });

const store = () => f.gw.gateway.proxy.admission;
const held = (u: TestAccount) => store().credit(counterKeys.credit(u.ownerId, u.id));
const usage = { prompt_tokens: 27_000, completion_tokens: 40 };
const billed = (model: string) => costOf({ prompt: usage.prompt_tokens, completion: usage.completion_tokens, reasoning: 0, cached: 0, cacheWrite: 0 }, priceFor(model, {}), 1, 1);

/** The account's credit reservation while its call is upstream (the mock holds the answer meanwhile). */
async function reservedWhileServed(u: TestAccount, call: Promise<unknown>): Promise<number> {
  let reserved = 0;
  for (let i = 0; i < 400 && !(reserved > 0); i++) {
    await sleep(10);
    reserved = held(u)?.reserved ?? 0;
  }
  await call;
  return reserved;
}

/** After the call: nothing held, the usage record and the balance moved by exactly the provider's usage. */
async function expectBilledExactly(u: TestAccount, credit: number, model: string) {
  await store().drain();
  expect(held(u)).toMatchObject({ reserved: 0 });
  const rows = await f.usage(u.id);
  expect(rows).toHaveLength(1);
  expect(rows[0]).toMatchObject({ model, prompt: usage.prompt_tokens, completion: usage.completion_tokens, status: 'ok' });
  expect(rows[0].credit_used).toBeCloseTo(billed(model), 12);
  expect(await spendableOf(f.gw.gateway.database.db, u.id)).toBeCloseTo(credit - billed(model), 9);
}

describe('an OpenAI model: the input counted with its tokenizer', () => {
  const MODEL = 'gpt-4.1';
  const params = claudeCodeChat(MODEL);
  const price = priceFor(MODEL, {});
  const context = modelLimits(MODEL, DEFAULT_OUTPUT_LIMIT).context;
  const cost = (input: number) => maxCostOf(input, params.max_tokens, price, 1, 1);
  const bytes = estimateInputTokens(params, Buffer.from(JSON.stringify(params)), MODEL, context);
  let counted = 0;
  let up = '';
  beforeAll(async () => {
    counted = (await countInputTokens(inputText(params, MODEL, context), await loadTextCounter('o200k_base'), context))!;
    up = secret('count-openai');
    await f.addKey(601, up);
    f.mock.behave(up, { usage, delayMs: 300 });
  });

  it('serves through the openai SDK what the bytes alone refused, holding exactly the counted bound, billed the provider\'s usage', async () => {
    expect(counted).toBeLessThan(bytes / 3);
    const credit = MIN + (cost(counted) + cost(bytes)) / 2;
    const u = await f.account({ level: 601, credit });
    const call = f.openai(u.key).chat.completions.create(params);
    expect(await reservedWhileServed(u, call)).toBeCloseTo(cost(counted), 12);
    const answer = await call;
    expect(answer.choices[0].message.content).toBeTruthy();
    await expectBilledExactly(u, credit, MODEL);
  });

  it('gives the counted hold back whole when the upstream fails: nothing billed', async () => {
    const failing = secret('count-openai-fails');
    await f.addKey(606, failing);
    f.mock.behave(failing, { status: 500, delayMs: 300 });
    const credit = MIN + (cost(counted) + cost(bytes)) / 2;
    const u = await f.account({ level: 606, credit });
    const call = f.openai(u.key).chat.completions.create(params).then(() => { throw new Error('served'); }, (err: { status?: number }) => err);
    expect(await reservedWhileServed(u, call)).toBeCloseTo(cost(counted), 12);
    expect(await call).toMatchObject({ status: 502 });
    await store().drain();
    expect(held(u)).toMatchObject({ reserved: 0 });
    expect(await f.usage(u.id)).toHaveLength(0);
    expect(await spendableOf(f.gw.gateway.database.db, u.id)).toBeCloseTo(credit, 9);
  });

  it('still refuses 402, naming the counted input, when even the count does not fit; nothing goes upstream', async () => {
    const u = await f.account({ level: 601, credit: MIN + cost(counted) / 2 });
    const before = f.mock.requests.length;
    const r = expectEnvelope(await f.gw.as(u.key).post('/v1/chat/completions', params), 402);
    expect(r.code).toBe('insufficient_balance');
    // Its bytes alone would have said "the input alone does not fit"; counted, it fits with less output.
    expect(r.message).toContain(`cannot hold this call's maximum cost of ${Math.round(cost(counted) * 1e6) / 1e6} above the minimum balance of 1`);
    expect(r.message).toContain(`(up to ${counted} input and ${params.max_tokens} output tokens); a lower output limit would fit: max_completion_tokens (or max_tokens) of `);
    expect(f.mock.requests.length).toBe(before);
    expect(held(u)).toMatchObject({ reserved: 0 });
  });
});

describe('a Claude model: the input counted by the key\'s own count_tokens', () => {
  const MODEL = 'claude-sonnet-4-5';
  const params = claudeCodeMessages(MODEL);
  const price = priceFor(MODEL, {});
  const context = modelLimits(MODEL, DEFAULT_OUTPUT_LIMIT).context;
  const cost = (input: number) => maxCostOf(input, params.max_tokens, price, 1, 1);
  const bytes = estimateInputTokens(params, Buffer.from(JSON.stringify(params)), MODEL, context);
  // What the mock's count_tokens answers for this request, as the gateway must put it (no max_tokens, no metadata).
  const mockCount = countedInputTokens({ model: MODEL, messages: params.messages, system: params.system, tools: params.tools });
  const counted = countedBound(mockCount, 0, context);
  const countRequests = (credential: string) => f.mock.requests.filter((r) => r.credential === credential && r.path === '/v1/messages/count_tokens');
  const messageRequests = (credential: string) => f.mock.requests.filter((r) => r.credential === credential && r.path === '/v1/messages');
  /** The SDK's error for a refused call (streamed, as Claude Code calls). */
  const refusal = (u: TestAccount) => f.anthropic(u.key).messages.stream(params).finalMessage().then(
    () => { throw new Error('served'); },
    (err: { status?: number; error?: any }) => err as { status: number; error: any },
  );

  it('serves through @anthropic-ai/sdk what the bytes alone refused, holding exactly the counted bound, billed the provider\'s usage', async () => {
    expect(counted).toBeLessThan(bytes / 3);
    const up = secret('count-anthropic');
    await f.addKey(602, up, { config: { provider_type: 'anthropic' } });
    f.mock.behave(up, { usage, delayMs: 300 });
    const credit = MIN + (cost(counted) + cost(bytes)) / 2;
    const u = await f.account({ level: 602, credit });
    const call = f.anthropic(u.key).messages.stream(params).finalMessage();
    expect(await reservedWhileServed(u, call)).toBeCloseTo(cost(counted), 12);
    expect((await call).stop_reason).toBe('end_turn');
    const [count] = countRequests(up);
    expect(count.body).toEqual({ model: MODEL, messages: params.messages, system: params.system, tools: params.tools });
    expect(count.headers['x-api-key']).toBe(up);
    expect(messageRequests(up)).toHaveLength(1);
    await expectBilledExactly(u, credit, MODEL);
  });

  it('still refuses 402, naming the counted input, when even the count does not fit', async () => {
    const up = secret('count-anthropic-short');
    await f.addKey(603, up, { config: { provider_type: 'anthropic' } });
    const u = await f.account({ level: 603, credit: MIN + cost(counted) / 2 });
    const e = await refusal(u);
    expect(e).toMatchObject({ status: 402, error: { type: 'error', error: { code: 'insufficient_balance' } } });
    expect(e.error.error.message).toContain(`(up to ${counted} input and ${params.max_tokens} output tokens); a lower output limit would fit: max_tokens of `);
    expect(countRequests(up)).toHaveLength(1);
    expect(messageRequests(up)).toHaveLength(0);
  });

  it('refuses by the byte bound once the deadline passes when count_tokens never answers: refused, not hung', async () => {
    const up = secret('count-anthropic-hangs');
    await f.addKey(604, up, { config: { provider_type: 'anthropic' } });
    f.mock.behave(up, { blackHole: true });
    const u = await f.account({ level: 604, credit: MIN + (cost(counted) + cost(bytes)) / 2 });
    // The deadline (COUNT_DEADLINE_MS) ends the wait; the test's own timeout would catch a hung call.
    const e = await refusal(u);
    expect(e).toMatchObject({ status: 402, error: { error: { code: 'insufficient_balance' } } });
    // The SDK streams: its body is the request and `"stream":true`.
    const sent = estimateInputTokens({ ...params, stream: true }, Buffer.from(JSON.stringify({ ...params, stream: true })), MODEL, context);
    expect(e.error.error.message).toContain(`(up to ${sent} input and ${params.max_tokens} output tokens)`);
    expect(countRequests(up)).toHaveLength(1);
    expect(messageRequests(up)).toHaveLength(0);
    expect(held(u)).toMatchObject({ reserved: 0 });
  });

  it('counts at count-tokens:rawPredict on a Vertex-Claude key, the model and version in the body', async () => {
    const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const email = 'count-vertex@proj-c.iam.gserviceaccount.com';
    f.mock.trustServiceAccount(email, publicKey.export({ type: 'spki', format: 'pem' }) as string);
    await f.addKey(605, secret('count-vertex'), {
      config: { provider_type: 'vertex', publisher: 'anthropic', base_url: f.mock.url, project_id: 'proj-c', client_email: email, private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }) },
    });
    f.mock.behave(email, { usage });
    const credit = MIN + (cost(counted) + cost(bytes)) / 2;
    const u = await f.account({ level: 605, credit });
    await f.anthropic(u.key).messages.stream(params).finalMessage();
    const count = f.mock.requests.find((r) => r.path.endsWith('/publishers/anthropic/models/count-tokens:rawPredict'))!;
    expect(count.body).toMatchObject({ model: MODEL, anthropic_version: 'vertex-2023-10-16', tools: params.tools });
    expect(count.body).not.toHaveProperty('max_tokens');
    await expectBilledExactly(u, credit, MODEL);
  });
});
