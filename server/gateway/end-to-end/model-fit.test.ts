/**
 * Requests valid for the model they reach, and usage where clients read it: the real
 * @anthropic-ai/sdk sending what Claude Code sends (a 150-character JSON metadata.user_id,
 * thinking with a budget, max_tokens 32,000) to an OpenAI-format key whose model is mapped to a
 * model without reasoning and to one with it, whole and streamed; the real openai SDK to an
 * Anthropic key the same way. The mock upstream refuses, as OpenAI and Anthropic do, what does
 * not fit the model (mock-upstream/model-fit.ts), so each 200 here is one they would give.
 */
import { createHash } from 'node:crypto';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { drain, nextLevel, secret, startProxyFixture, type ProxyFixture } from '../test-fixture';
import { estimateInputTokens } from '../../domain/pricing/estimate';

let f: ProxyFixture;
beforeAll(async () => { f = await startProxyFixture(); });
afterAll(async () => { await f?.close(); });

// As Claude Code 2.x sends it: a JSON blob of about 150 characters.
const USER_ID = JSON.stringify({ device_id: 'd'.repeat(64), account_uuid: '', session_id: '6f1c2a9e-3b4d-4e5f-8a7b-0c1d2e3f4a5b' });
const hashed = (s: string) => createHash('sha256').update(s).digest('hex');
const lastBody = () => f.mock.requests.at(-1)!.body as Record<string, any>;
// A timeout of its own, as Claude Code sets: without one the SDK refuses max_tokens 32,000 unstreamed.
const anthropic = (key: string) => new Anthropic({ apiKey: key, baseURL: f.gw.url, maxRetries: 0, timeout: 60_000 });

/** A user on a Level of its own, its `claude-*` calls mapped to `model` on one key of `kind`. */
async function mapped(label: string, model: string, kind: 'openai' | 'anthropic' = 'openai') {
  const up = secret(label);
  const level = nextLevel();
  await f.addKey(level, up, kind === 'anthropic' ? { config: { provider_type: 'anthropic' } } : undefined);
  const user = await f.account({ level, modelMapper: `claude-*=${model}` });
  return { up, user };
}

const claudeCode = {
  model: 'claude-sonnet-4-5-20250929', max_tokens: 32_000, metadata: { user_id: USER_ID },
  thinking: { type: 'enabled' as const, budget_tokens: 10_000 },
  system: 'You are Claude Code.', messages: [{ role: 'user' as const, content: 'List the files.' }],
};

describe("Claude Code's request on an OpenAI-format key", () => {
  it('to a model without reasoning: no reasoning_effort, output capped, user hashed; whole and streamed', async () => {
    expect(USER_ID.length).toBeGreaterThan(140);
    const { up, user } = await mapped('fit-gpt4o', 'gpt-4o');
    f.mock.behave(up, { text: 'Two files.', thinking: 'Never sent: gpt-4o does not reason.' });
    const client = anthropic(user.key);
    const whole = await client.messages.create(claudeCode);
    expect(whole.content).toEqual([{ type: 'text', text: 'Two files.' }]);
    const sent = lastBody();
    expect(sent.model).toBe('gpt-4o');
    // gpt-4o: no reasoning, at most 16,384 output tokens (the catalogue's and OpenAI's figure).
    expect(sent).not.toHaveProperty('reasoning_effort');
    expect(sent.max_completion_tokens ?? sent.max_tokens).toBe(16_384);
    expect(sent.user).toBe(hashed(USER_ID));
    expect(sent.user).toHaveLength(64);
    const streamed = await client.messages.stream(claudeCode).finalMessage();
    expect(streamed.content).toEqual([{ type: 'text', text: 'Two files.' }]);
    // The same user is the same ID on every call.
    expect(lastBody()).toMatchObject({ model: 'gpt-4o', user: hashed(USER_ID), stream: true });
    expect(lastBody()).not.toHaveProperty('reasoning_effort');
    expect(f.mock.requests.filter((r) => r.credential === up)).toHaveLength(2);
  });

  it('to a reasoning model: its effort kept, max_completion_tokens within its limit, no temperature', async () => {
    const { up, user } = await mapped('fit-o4', 'o4-mini');
    f.mock.behave(up, { text: 'Two files.', thinking: 'Look at the tree.' });
    const client = anthropic(user.key);
    for (const stream of [false, true]) {
      const m = stream ? await client.messages.stream(claudeCode).finalMessage() : await client.messages.create(claudeCode);
      expect(m.content).toEqual([{ type: 'thinking', thinking: 'Look at the tree.', signature: '' }, { type: 'text', text: 'Two files.' }]);
      expect(lastBody()).toMatchObject({ model: 'o4-mini', reasoning_effort: 'high', max_completion_tokens: 32_000, user: hashed(USER_ID) });
      expect(lastBody()).not.toHaveProperty('max_tokens');
    }
    // Without thinking, Claude Code sets a temperature: o4-mini takes none, so it is left out.
    // (This SDK's types have dropped temperature and top_p; the API still takes them.)
    await client.messages.create({ ...claudeCode, thinking: undefined, temperature: 0.3, top_p: 0.9, max_tokens: 500_000 } as Anthropic.MessageCreateParamsNonStreaming);
    expect(lastBody()).not.toHaveProperty('temperature');
    expect(lastBody()).not.toHaveProperty('top_p');
    expect(lastBody()).not.toHaveProperty('max_tokens');
    expect(lastBody().max_completion_tokens).toBe(100_000);
  });

  it('a same-format call goes byte for byte: what the model refuses reaches the client as the provider said it', async () => {
    const { user } = await mapped('fit-native', 'gpt-4o');
    const err: any = await f.openai(user.key).chat.completions
      .create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], reasoning_effort: 'high', user: USER_ID })
      .catch((e) => e);
    expect(err.status).toBe(400);
    expect(err.error).toMatchObject({ param: 'user', code: 'string_above_max_length' });
    expect(err.error.message).toBe(`Invalid 'user': string too long. Expected a string with maximum length 64, but got a string with length ${USER_ID.length} instead.`);
    const again: any = await f.openai(user.key).chat.completions
      .create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], reasoning_effort: 'high' })
      .catch((e) => e);
    expect(again.status).toBe(400);
    expect(again.error).toMatchObject({ message: "Unsupported parameter: 'reasoning_effort' is not supported with this model.", param: 'reasoning_effort', code: 'unsupported_parameter' });
  });
});

describe('an OpenAI client on an Anthropic key', () => {
  it('to a model without thinking: no thinking, max_tokens at its limit, its temperature kept, a long user hashed', async () => {
    const { up, user } = await mapped('fit-haiku', 'claude-3-5-haiku-20241022', 'anthropic');
    f.mock.behave(up, { text: 'Hello.' });
    const longUser = 'u'.repeat(300);
    const params = { model: 'claude-anything', messages: [{ role: 'user' as const, content: 'hi' }], reasoning_effort: 'high' as const, max_completion_tokens: 32_000, temperature: 0.5, user: longUser };
    const whole = await f.openai(user.key).chat.completions.create(params);
    expect(whole.choices[0].message.content).toBe('Hello.');
    const sent = lastBody();
    // Without thinking, the client's temperature goes too.
    expect(sent).toMatchObject({ model: 'claude-3-5-haiku-20241022', max_tokens: 8192, temperature: 0.5, metadata: { user_id: hashed(longUser) } });
    expect(sent).not.toHaveProperty('thinking');
    const { items, error } = await drain(await f.openai(user.key).chat.completions.create({ ...params, stream: true }));
    expect(error).toBeUndefined();
    expect(items.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe('Hello.');
    expect(lastBody()).not.toHaveProperty('thinking');
    // A user ID Anthropic takes goes as it is.
    await f.openai(user.key).chat.completions.create({ ...params, user: USER_ID });
    expect(lastBody().metadata).toEqual({ user_id: USER_ID });
  });

  it('to a thinking model: max_tokens within its limit, the budget below it', async () => {
    const { up, user } = await mapped('fit-opus', 'claude-opus-4-1', 'anthropic');
    f.mock.behave(up, { text: 'Hello.', thinking: 'Hmm.' });
    const r = await f.openai(user.key).chat.completions.create({ model: 'claude-x', messages: [{ role: 'user', content: 'hi' }], reasoning_effort: 'high', max_completion_tokens: 20_000 });
    expect(r.choices[0].message.content).toBe('Hello.');
    // 20,000 plus the 24,576 of the high budget would pass claude-opus-4-1's 32,000.
    expect(lastBody()).toMatchObject({ max_tokens: 32_000, thinking: { type: 'enabled', budget_tokens: 24_576 } });
  });
});

describe('a Responses client on a chat-only key', () => {
  it('to an OpenAI reasoning model: max_completion_tokens, no temperature, the user hashed', async () => {
    const up = secret('fit-responses');
    const level = nextLevel();
    await f.addKey(level, up, { config: { provider_type: 'standard', responses: false } });
    const user = await f.account({ level });
    f.mock.behave(up, { text: 'Done.' });
    const r = await f.openai(user.key).responses.create({ model: 'o4-mini', input: 'hi', max_output_tokens: 500, temperature: 0.3, user: USER_ID, store: false });
    expect(r.output_text).toBe('Done.');
    expect(lastBody()).toMatchObject({ model: 'o4-mini', max_completion_tokens: 500, user: hashed(USER_ID) });
    expect(lastBody()).not.toHaveProperty('max_tokens');
    expect(lastBody()).not.toHaveProperty('temperature');
  });
});

describe('usage where clients read it', () => {
  it("a translated Anthropic stream's message_start carries the gateway's estimate; message_delta the exact counts", async () => {
    const { up, user } = await mapped('fit-usage', 'gpt-4o');
    f.mock.behave(up, { text: 'Two files.', usage: { prompt_tokens: 1234, cached_tokens: 200, completion_tokens: 56 } });
    const params = { ...claudeCode, thinking: undefined, max_tokens: 1000 };
    const stream = f.anthropic(user.key).messages.stream(params);
    let start: any;
    // A copy: the SDK goes on to update the message it started with.
    stream.on('streamEvent', (e) => { if (e.type === 'message_start') start = { ...e.message.usage }; });
    const final = await stream.finalMessage();
    // What the gateway answers count_tokens with for this body (the bytes the SDK sent).
    const body = JSON.parse(JSON.stringify({ ...params, stream: true }));
    expect(start).toEqual({ input_tokens: estimateInputTokens(body, undefined, params.model), cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 });
    expect(start.input_tokens).toBeGreaterThan(0);
    // The provider's counts, once it gave them, replace the estimate in the client's message.
    expect(final.usage).toMatchObject({ input_tokens: 1034, cache_read_input_tokens: 200, cache_creation_input_tokens: 0, output_tokens: 56 });
  });
});
