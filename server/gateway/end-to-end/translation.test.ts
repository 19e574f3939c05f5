/**
 * Any client on any provider: the real @anthropic-ai/sdk on OpenAI-format keys, the real openai
 * SDK on Anthropic keys, Responses clients on keys without the Responses API, whole and
 * streamed, each call billed once with the right token classes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type OpenAI from 'openai';
import { drain, secret, startProxyFixture, type ProxyFixture } from '../test-fixture';
import { signThinking } from '../../testing/mock-upstream/anthropic';
import { estimateInputTokens } from '../../domain/pricing/estimate';

let f: ProxyFixture;
// Prices of our own, so the expected bills below are arithmetic on the token classes.
const PRICE = { InputText: 1, CachedText: 0.1, CacheWrite: 1.25, OutputText: 5, ReasonText: 7 };
const CLAUDE = 'claude-test-1';
const GPT = 'gpt-test-1';
beforeAll(async () => {
  f = await startProxyFixture();
  await f.config({ PRICING: JSON.stringify({ ChatPricing: { [CLAUDE]: PRICE, [GPT]: PRICE } }) });
});
afterAll(async () => { await f?.close(); });

const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const weatherTool = { name: 'get_weather', description: 'Current weather of a city', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] } };
const openaiTool = { type: 'function' as const, function: { name: weatherTool.name, description: weatherTool.description, parameters: weatherTool.input_schema } };
const toolCall = { name: 'get_weather', arguments: { city: 'Paris' } };
const bill = (u: { input: number; cached?: number; written?: number; output: number; reasoning?: number }) =>
  (u.input * PRICE.InputText + (u.cached ?? 0) * PRICE.CachedText + (u.written ?? 0) * PRICE.CacheWrite
    + (u.output - (u.reasoning ?? 0)) * PRICE.OutputText + (u.reasoning ?? 0) * PRICE.ReasonText) / 1e6;
const lastBody = () => f.mock.requests.at(-1)!.body as Record<string, any>;

async function level(n: number, ...keys: { secret: string; anthropic?: boolean; chatOnly?: boolean }[]) {
  for (const k of keys) {
    await f.addKey(n, k.secret, { config: k.anthropic ? { provider_type: 'anthropic' } : k.chatOnly ? { provider_type: 'standard', responses: false } : undefined });
  }
  return f.account({ level: n });
}

describe('@anthropic-ai/sdk on an OpenAI-format key', () => {
  it('runs a multi-turn tool-use loop, whole and streamed, through chat completions', async () => {
    const up = secret('a2o-tools');
    const user = await level(201, { secret: up });
    f.mock.behave(up, { toolCall, text: 'It is 18°C in Paris.' });
    const client = f.anthropic(user.key);
    const ask = { role: 'user' as const, content: 'What is the weather in Paris?' };
    for (const streamed of [false, true]) {
      const params = { model: CLAUDE, max_tokens: 300, tools: [weatherTool], messages: [ask] };
      const first = streamed ? await client.messages.stream(params).finalMessage() : await client.messages.create(params);
      expect(first.stop_reason).toBe('tool_use');
      const use = first.content.find((b) => b.type === 'tool_use')!;
      expect(use).toMatchObject({ type: 'tool_use', name: 'get_weather', input: { city: 'Paris' } });
      const rec = f.mock.requests.at(-1)!;
      expect(rec.path).toBe('/v1/chat/completions');
      expect(rec.credential).toBe(up);
      expect(rec.headers.authorization).toBe(`Bearer ${up}`);
      expect(lastBody().tools).toEqual([openaiTool]);
      const next = { ...params, messages: [ask, { role: 'assistant' as const, content: first.content }, { role: 'user' as const, content: [{ type: 'tool_result' as const, tool_use_id: use.id, content: '18°C' }] }] };
      const second = streamed ? await client.messages.stream(next).finalMessage() : await client.messages.create(next);
      expect(second.stop_reason).toBe('end_turn');
      expect(second.content).toEqual([{ type: 'text', text: 'It is 18°C in Paris.' }]);
      // The mock refuses a tool message that does not follow its call: the result went where it belongs.
      expect(lastBody().messages.slice(1)).toEqual([
        { role: 'assistant', content: null, tool_calls: [{ id: use.id, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
        { role: 'tool', tool_call_id: use.id, content: '18°C' },
      ]);
    }
    const rows = await f.usage(user.id);
    expect(rows.map((r) => [r.endpoint, r.status])).toEqual(Array(4).fill(['/v1/messages', 'ok']));
  });

  it('sends images, stop sequences and thinking over, and bills cached and reasoning tokens once, whole and streamed', async () => {
    const up = secret('a2o-rich');
    const user = await level(202, { secret: up });
    const usage = { prompt_tokens: 1000, completion_tokens: 50, reasoning_tokens: 20, cached_tokens: 600 };
    f.mock.behave(up, { text: 'Looks red. STOP and more', thinking: 'The pixel is red.', usage });
    const client = f.anthropic(user.key);
    const params = {
      model: CLAUDE, max_tokens: 3000, stop_sequences: ['STOP'], thinking: { type: 'enabled' as const, budget_tokens: 2048 },
      messages: [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'What colour?' }, { type: 'image' as const, source: { type: 'base64' as const, media_type: 'image/png' as const, data: png } }] }],
    };
    const whole = await client.messages.create(params);
    expect(lastBody()).toMatchObject({
      stop: ['STOP'], reasoning_effort: 'low', max_completion_tokens: 3000,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'What colour?' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } }] }],
    });
    expect(whole.content).toEqual([{ type: 'thinking', thinking: 'The pixel is red.', signature: '' }, { type: 'text', text: 'Looks red. ' }]);
    expect(whole.usage).toMatchObject({ input_tokens: 400, cache_read_input_tokens: 600, cache_creation_input_tokens: 0, output_tokens: 50 });
    const events = (await drain(await client.messages.create({ ...params, stream: true }))).items;
    expect(events[0].type).toBe('message_start');
    expect(events.filter((e) => e.type === 'content_block_delta').map((e) => (e as any).delta.type)).toContain('thinking_delta');
    expect(events.at(-1)!.type).toBe('message_stop');
    const delta = events.find((e) => e.type === 'message_delta') as any;
    expect(delta.usage).toMatchObject({ input_tokens: 400, cache_read_input_tokens: 600, output_tokens: 50 });
    expect(lastBody().stream_options).toEqual({ include_usage: true });
    const rows = await f.usage(user.id);
    expect(rows).toHaveLength(2);
    for (const r of rows) {
      expect(r).toMatchObject({ endpoint: '/v1/messages', model: CLAUDE, prompt: 1000, cached: 600, completion: 50, reasoning: 20, status: 'ok' });
      expect(r.credit_used).toBeCloseTo(bill({ input: 400, cached: 600, output: 50, reasoning: 20 }), 12);
    }
  });
});

/** The assistant message of a streamed chat completion, rebuilt from its chunks as a client keeps it. */
async function collect(stream: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>) {
  const msg: Record<string, any> = { role: 'assistant', content: null };
  const calls: any[] = [];
  let finish: string | null = null;
  let usage: any;
  for await (const c of stream) {
    if (c.usage) usage = c.usage;
    const ch = c.choices[0];
    if (!ch) continue;
    const d = ch.delta as any;
    if (d.content) msg.content = (msg.content ?? '') + d.content;
    if (d.reasoning_content) msg.reasoning_content = (msg.reasoning_content ?? '') + d.reasoning_content;
    if (d.thinking_blocks) msg.thinking_blocks = [...(msg.thinking_blocks ?? []), ...d.thinking_blocks];
    for (const t of d.tool_calls ?? []) {
      calls[t.index] ??= { id: t.id, type: 'function', function: { name: t.function?.name ?? '', arguments: '' } };
      calls[t.index].function.arguments += t.function?.arguments ?? '';
    }
    if (ch.finish_reason) finish = ch.finish_reason;
  }
  if (calls.length) msg.tool_calls = calls;
  return { msg, finish, usage };
}

describe('openai SDK on an Anthropic key', () => {
  it('runs a tool-use loop with thinking, whole and streamed: the signed thinking goes back with the tool result', async () => {
    const up = secret('o2a-tools');
    const user = await level(211, { secret: up, anthropic: true });
    f.mock.behave(up, { toolCall, thinking: 'I need the weather tool.', text: 'Sunny, 21°C.' });
    const client = f.openai(user.key);
    const ask = { role: 'user' as const, content: 'Weather in Paris?' };
    for (const streamed of [false, true]) {
      const params = { model: CLAUDE, messages: [ask] as any[], tools: [openaiTool], reasoning_effort: 'low' as const };
      let first: Record<string, any>;
      let finish: string | null;
      if (streamed) ({ msg: first, finish } = await collect(await client.chat.completions.create({ ...params, stream: true })));
      else {
        const r = await client.chat.completions.create(params);
        first = r.choices[0].message;
        finish = r.choices[0].finish_reason;
      }
      expect(finish).toBe('tool_calls');
      const rec = f.mock.requests.at(-1)!;
      expect(rec).toMatchObject({ path: '/v1/messages', credential: up });
      expect(rec.headers['x-api-key']).toBe(up);
      expect(rec.headers['anthropic-version']).toBe('2023-06-01');
      expect(rec.headers.authorization).toBeUndefined();
      expect(lastBody()).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 2048 }, tools: [weatherTool], max_tokens: 4096 });
      expect(first.reasoning_content).toBe('I need the weather tool.');
      expect(first.thinking_blocks).toEqual([{ type: 'thinking', thinking: 'I need the weather tool.', signature: signThinking('I need the weather tool.') }]);
      expect(first.tool_calls).toEqual([{ id: expect.stringMatching(/^toolu_/), type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }]);
      // Sent back as received, the gateway's extra fields (thinking_blocks) included.
      const next = { ...params, messages: [ask, first as OpenAI.Chat.Completions.ChatCompletionMessageParam, { role: 'tool' as const, tool_call_id: first.tool_calls[0].id, content: '21°C, sunny' }] };
      // The mock checks the signature and that the tool-use turn starts with its thinking.
      const answer = streamed
        ? (await collect(await client.chat.completions.create({ ...next, stream: true }))).msg.content
        : (await client.chat.completions.create(next)).choices[0].message.content;
      expect(answer).toBe('Sunny, 21°C.');
      expect(lastBody().messages.slice(1)).toEqual([
        { role: 'assistant', content: [
          { type: 'thinking', thinking: 'I need the weather tool.', signature: signThinking('I need the weather tool.') },
          { type: 'tool_use', id: first.tool_calls[0].id, name: 'get_weather', input: { city: 'Paris' } },
        ] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: first.tool_calls[0].id, content: '21°C, sunny' }] },
      ]);
    }
    // Tampered thinking is refused by the provider, and the 400 reaches the client in OpenAI's shape.
    const err: any = await client.chat.completions.create({
      model: CLAUDE, messages: [ask, { role: 'assistant', content: null, thinking_blocks: [{ type: 'thinking', thinking: 'forged', signature: 'sig_bad' }], tool_calls: [{ id: 't1', type: 'function', function: { name: 'get_weather', arguments: '{}' } }] } as any, { role: 'tool', tool_call_id: 't1', content: 'x' }],
      tools: [openaiTool], reasoning_effort: 'low',
    }).catch((e) => e);
    expect(err.status).toBe(400);
    expect(err.error).toMatchObject({ message: expect.stringContaining('Invalid `signature`'), type: 'invalid_request_error' });
    expect((await f.usage(user.id)).map((r) => r.endpoint)).toEqual(Array(4).fill('/v1/chat/completions'));
  });

  it('sends images and stop sequences over, and bills cache reads and writes once, whole and streamed', async () => {
    const up = secret('o2a-rich');
    const user = await level(212, { secret: up, anthropic: true });
    f.mock.behave(up, { text: 'A red pixel.###rest', usage: { prompt_tokens: 2000, completion_tokens: 30, reasoning_tokens: 10, cached_tokens: 1200, cache_write_tokens: 500 } });
    const client = f.openai(user.key);
    const params = {
      model: CLAUDE, stop: '###', max_tokens: 100, temperature: 0.4,
      messages: [
        { role: 'system' as const, content: 'Describe images.' },
        { role: 'user' as const, content: [{ type: 'text' as const, text: 'What is this?' }, { type: 'image_url' as const, image_url: { url: `data:image/png;base64,${png}` } }, { type: 'image_url' as const, image_url: { url: 'https://example.com/b.png' } }] },
      ],
    };
    const r = await client.chat.completions.create(params);
    expect(r.choices[0]).toMatchObject({ finish_reason: 'stop', message: { role: 'assistant', content: 'A red pixel.' } });
    expect(r.usage).toMatchObject({ prompt_tokens: 2000, completion_tokens: 30, prompt_tokens_details: { cached_tokens: 1200 }, completion_tokens_details: { reasoning_tokens: 10 } });
    expect(lastBody()).toEqual({
      model: CLAUDE, system: 'Describe images.', max_tokens: 100, stop_sequences: ['###'], temperature: 0.4,
      messages: [{ role: 'user', content: [
        { type: 'text', text: 'What is this?' },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } },
        { type: 'image', source: { type: 'url', url: 'https://example.com/b.png' } },
      ] }],
    });
    const s = await collect(await client.chat.completions.create({ ...params, stream: true, stream_options: { include_usage: true } }));
    expect(s.msg.content).toBe('A red pixel.');
    expect(s.usage).toMatchObject({ prompt_tokens: 2000, completion_tokens: 30, prompt_tokens_details: { cached_tokens: 1200 } });
    // Without include_usage the client sees no usage chunk, yet the call is billed by the provider's count.
    const plain = await drain(await client.chat.completions.create({ ...params, stream: true }));
    expect(plain.items.every((c) => c.choices.length === 1 && c.usage === undefined)).toBe(true);
    const rows = await f.usage(user.id);
    expect(rows).toHaveLength(3);
    for (const row of rows) {
      expect(row).toMatchObject({ endpoint: '/v1/chat/completions', prompt: 2000, cached: 1200, completion: 30, reasoning: 10, status: 'ok' });
      expect(row.credit_used).toBeCloseTo(bill({ input: 300, cached: 1200, written: 500, output: 30, reasoning: 10 }), 12);
    }
  });
});

describe('a Level mixing an OpenAI-format key and an Anthropic key', () => {
  it('serves chat and messages clients on both, and fails over across formats', async () => {
    const openaiKey = secret('mix-openai');
    const anthropicKey = secret('mix-anthropic');
    const user = await level(220, { secret: openaiKey }, { secret: anthropicKey, anthropic: true });
    const from = f.mock.requests.length;
    for (let i = 0; i < 2; i++) {
      expect((await f.openai(user.key).chat.completions.create({ model: CLAUDE, messages: [{ role: 'user', content: 'hi' }] })).choices[0].message.content).toMatch(/mock answer/);
      expect((await f.anthropic(user.key).messages.create({ model: CLAUDE, max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] })).content[0]).toMatchObject({ type: 'text' });
    }
    const seen = f.mock.requests.slice(from).map((r) => `${r.credential === openaiKey ? 'openai' : 'anthropic'} ${r.path}`);
    expect(new Set(seen)).toEqual(new Set(['openai /v1/chat/completions', 'anthropic /v1/messages']));
    expect(seen).toHaveLength(4);

    f.mock.behave(anthropicKey, { status: 500 });
    for (let i = 0; i < 2; i++) {
      const m = await f.anthropic(user.key).messages.create({ model: CLAUDE, max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] });
      expect(m.content[0]).toMatchObject({ type: 'text', text: `This is a mock answer from ${CLAUDE}.` });
      expect(f.mock.requests.at(-1)).toMatchObject({ credential: openaiKey, path: '/v1/chat/completions' });
    }
    f.mock.behave(anthropicKey, {});
    f.mock.behave(openaiKey, { status: 503 });
    for (let i = 0; i < 2; i++) {
      const { items, error } = await drain(await f.openai(user.key).chat.completions.create({ model: CLAUDE, messages: [{ role: 'user', content: 'hi' }], stream: true }));
      expect(error).toBeUndefined();
      expect(items.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe(`This is a mock answer from ${CLAUDE}.`);
      expect(f.mock.requests.at(-1)).toMatchObject({ credential: anthropicKey, path: '/v1/messages' });
    }
    const rows = await f.usage(user.id);
    expect(rows).toHaveLength(8);
    expect(rows.every((r) => r.status === 'ok' && r.prompt > 0 && r.completion > 0)).toBe(true);
  });
});

describe('a Responses client on keys without the Responses API', () => {
  for (const kind of ['anthropic', 'chat-only'] as const) {
    it(`completes a conversation whole and streamed on an ${kind} key`, async () => {
      const up = secret(`resp-${kind}`);
      const user = await level(kind === 'anthropic' ? 230 : 231, { secret: up, anthropic: kind === 'anthropic', chatOnly: kind === 'chat-only' });
      f.mock.behave(up, { toolCall: { name: 'shell', arguments: { cmd: 'ls' } }, text: 'Two files.', usage: { prompt_tokens: 300, completion_tokens: 12, cached_tokens: 100 } });
      const client = f.openai(user.key);
      const tools = [{ type: 'function' as const, name: 'shell', description: 'Runs a command', parameters: { type: 'object', properties: { cmd: { type: 'string' } } }, strict: false }];
      const input: any[] = [{ role: 'user', content: 'List the files' }];
      const first = await client.responses.create({ model: CLAUDE, instructions: 'Be brief.', input, tools, store: false });
      expect(f.mock.requests.at(-1)!.path).toBe(kind === 'anthropic' ? '/v1/messages' : '/v1/chat/completions');
      const call = first.output.find((o) => o.type === 'function_call')!;
      expect(call).toMatchObject({ type: 'function_call', name: 'shell', arguments: '{"cmd":"ls"}', status: 'completed' });
      expect(first.usage).toMatchObject({ input_tokens: 300, input_tokens_details: { cached_tokens: 100 }, output_tokens: 12 });
      input.push(...first.output, { type: 'function_call_output', call_id: (call as any).call_id, output: 'a.txt b.txt' });
      const stream = await client.responses.create({ model: CLAUDE, instructions: 'Be brief.', input, tools, store: false, stream: true });
      const events = (await drain(stream)).items;
      expect(events[0].type).toBe('response.created');
      expect(events.filter((e) => e.type === 'response.output_text.delta').map((e: any) => e.delta).join('')).toBe('Two files.');
      const done = events.at(-1) as any;
      expect(done).toMatchObject({ type: 'response.completed', response: { status: 'completed', output: [{ type: 'message', content: [{ type: 'output_text', text: 'Two files.' }] }], usage: { input_tokens: 300, output_tokens: 12 } } });
      // A stored response needs the provider's state: refused with a clear 400, no key called.
      const n = f.mock.requests.length;
      const err: any = await client.responses.create({ model: CLAUDE, input: 'again', previous_response_id: 'resp_unknown' }).catch((e) => e);
      expect(err.status).toBe(400);
      expect(err.error).toMatchObject({ code: 'unsupported_by_provider', message: expect.stringContaining('previous_response_id needs a key with the Responses API') });
      expect(f.mock.requests.length).toBe(n);
      const rows = await f.usage(user.id);
      expect(rows.map((r) => [r.endpoint, r.prompt, r.cached, r.completion])).toEqual([['/v1/responses', 300, 100, 12], ['/v1/responses', 300, 100, 12]]);
      expect(rows[1].credit_used).toBeCloseTo(bill({ input: 200, cached: 100, output: 12 }), 12);
    });
  }
});

describe('/v1/messages/count_tokens', () => {
  it('is passed to an Anthropic key, and estimated for an OpenAI-format key; neither is billed', async () => {
    const anthropicKey = secret('count-anthropic');
    const openaiKey = secret('count-openai');
    const a = await level(240, { secret: anthropicKey, anthropic: true });
    const o = await level(241, { secret: openaiKey });
    const params = { model: CLAUDE, system: 'Be brief.', messages: [{ role: 'user' as const, content: 'How many tokens is this sentence?' }] };
    const counted = await f.anthropic(a.key).messages.countTokens(params);
    expect(f.mock.requests.at(-1)).toMatchObject({ path: '/v1/messages/count_tokens', credential: anthropicKey });
    expect(counted.input_tokens).toBe(Math.ceil('Be brief.\nHow many tokens is this sentence?'.length / 4));
    const n = f.mock.requests.length;
    const estimated = await f.anthropic(o.key).messages.countTokens(params);
    expect(f.mock.requests.length).toBe(n);
    expect(estimated.input_tokens).toBe(estimateInputTokens(params));
    expect(await f.usage(a.id)).toHaveLength(0);
    expect(await f.usage(o.id)).toHaveLength(0);
  });
});

describe('a translated stream the provider cuts', () => {
  it('raises in the client\'s SDK and is billed for what was delivered', async () => {
    const toOpenAi = secret('cut-a2o');
    const toAnthropic = secret('cut-o2a');
    const a = await level(250, { secret: toOpenAi });
    const o = await level(251, { secret: toAnthropic, anthropic: true });
    f.mock.behave(toOpenAi, { chunks: 5, cutAfterChunks: 2 });
    f.mock.behave(toAnthropic, { chunks: 5, cutAfterChunks: 2, usage: { prompt_tokens: 300, completion_tokens: 40 } });
    const anthropicSide = await drain(await f.anthropic(a.key).messages.create({ model: CLAUDE, max_tokens: 50, messages: [{ role: 'user', content: 'hi' }], stream: true }));
    expect(anthropicSide.error?.constructor.name).toBe('APIError');
    expect(anthropicSide.items.filter((e) => e.type === 'content_block_delta')).toHaveLength(2);
    const openaiSide = await drain(await f.openai(o.key).chat.completions.create({ model: CLAUDE, messages: [{ role: 'user', content: 'hi' }], stream: true }));
    expect(openaiSide.error?.error).toMatchObject({ code: 'stream_interrupted' });
    expect(openaiSide.items.filter((c) => c.choices[0]?.delta.content)).toHaveLength(2);
    const [ra] = await f.usage(a.id);
    expect(ra).toMatchObject({ status: 'abnormal', endpoint: '/v1/messages' });
    expect(ra.completion).toBeGreaterThanOrEqual(2);
    // The Anthropic stream announced its input in message_start: that much is billed exactly.
    const [ro] = await f.usage(o.id);
    expect(ro).toMatchObject({ status: 'abnormal', endpoint: '/v1/chat/completions', prompt: 300 });
    expect(ro.completion).toBeGreaterThanOrEqual(2);
    expect(ro.completion).toBeLessThan(40);
  });
});
