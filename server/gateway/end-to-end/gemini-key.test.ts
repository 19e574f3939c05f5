/**
 * The `gemini` provider kind: Google's Gemini API behind a key whose SecretKey goes as
 * `x-goog-api-key`. `@google/genai` goes byte for byte (whole, as events and as a JSON array),
 * billed exactly from usageMetadata (cached and thoughts tokens, a stream's running totals
 * billed once); the `openai` SDK (chat and Responses) and `@anthropic-ai/sdk` run a two-step
 * function-calling loop, whole and streamed, against a mock that refuses a function call
 * without the thought signature it issued; embeddings; 429 → the next key; an invalid key is
 * disabled. The mock itself is first proved against the real SDK pointed at it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, GoogleGenAI, Type, type Content } from '@google/genai';
import type OpenAI from 'openai';
import { nextLevel, secret, startProxyFixture, type ProxyFixture } from '../test-fixture';
import { thoughtSignatureOf } from '../../testing/mock-upstream/gemini';

let f: ProxyFixture;
const MODEL = 'gemini-test-1';
const PRICE = { InputText: 1, CachedText: 0.1, OutputText: 5, ReasonText: 7 };
beforeAll(async () => {
  f = await startProxyFixture();
  await f.config({ PRICING: JSON.stringify({ ChatPricing: { [MODEL]: PRICE, 'gemini-embed-test': { InputText: 0.1, OutputText: 0 } } }) });
});
afterAll(async () => { await f?.close(); });

const bill = (u: { input: number; cached?: number; output: number; reasoning?: number }) =>
  (u.input * PRICE.InputText + (u.cached ?? 0) * PRICE.CachedText + (u.output - (u.reasoning ?? 0)) * PRICE.OutputText + (u.reasoning ?? 0) * PRICE.ReasonText) / 1e6;
const last = () => f.mock.requests.at(-1)!;
const genai = (key: string, baseUrl = f.gw.url, apiVersion?: string) => new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl, ...(apiVersion ? { apiVersion } : {}) } });

async function geminiUser(label: string) {
  const up = secret(label);
  const level = nextLevel();
  const keyId = await f.addKey(level, up, { config: { provider_type: 'gemini' } });
  return { up, keyId, level, user: await f.account({ level }) };
}

const weather = {
  name: 'get_weather', description: 'Current weather of a city',
  parameters: { type: Type.OBJECT, properties: { city: { type: Type.STRING } }, required: ['city'] },
};
const ask: Content = { role: 'user', parts: [{ text: 'What is the weather in Paris?' }] };
const call = { name: 'get_weather', arguments: { city: 'Paris' } };

async function collect(stream: AsyncIterable<any>) {
  let text = '';
  const parts: any[] = [];
  const finishes: string[] = [];
  let usage: any;
  for await (const c of stream) {
    const cand = c.candidates?.[0];
    for (const p of cand?.content?.parts ?? []) {
      if (p.text && !p.thought) text += p.text;
      if (p.functionCall) parts.push(p);
    }
    if (cand?.finishReason) finishes.push(cand.finishReason);
    if (c.usageMetadata) usage = c.usageMetadata;
  }
  return { text, parts, finishes, usage };
}

describe('the Gemini mock, against @google/genai pointed at it', () => {
  it('answers the SDK, and refuses what Google refuses: a missing or altered signature, an unknown field, a key in the URL', async () => {
    const up = secret('mock-direct');
    f.mock.behave(up, { toolCall: call, text: 'Sunny.' });
    const ai = genai(up, f.mock.url, 'v1beta');
    const config = { tools: [{ functionDeclarations: [weather] }] };
    const first = await ai.models.generateContent({ model: MODEL, contents: [ask], config });
    expect(last()).toMatchObject({ path: `/v1beta/models/${MODEL}:generateContent`, credential: up, headers: { 'x-goog-api-key': up } });
    const model = first.candidates![0].content!;
    expect(model.parts![0].thoughtSignature).toBe(thoughtSignatureOf('get_weather', { city: 'Paris' }));
    const answer: Content = { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { output: '21°C' } } }] };
    expect((await ai.models.generateContent({ model: MODEL, contents: [ask, model, answer], config })).text).toBe('Sunny.');
    const streamed = await collect(await ai.models.generateContentStream({ model: MODEL, contents: [ask, model, answer], config }));
    expect(streamed).toMatchObject({ text: 'Sunny.', finishes: ['STOP'] });
    expect(last().query).toEqual({ alt: 'sse' });

    const unsigned: Content = { role: 'model', parts: [{ functionCall: model.parts![0].functionCall }] };
    const missing: any = await ai.models.generateContent({ model: MODEL, contents: [ask, unsigned, answer], config }).catch((e) => e);
    expect(missing).toBeInstanceOf(ApiError);
    expect(missing.status).toBe(400);
    expect(missing.message).toContain('Function call is missing a thought_signature in functionCall parts');
    const altered: Content = { role: 'model', parts: [{ ...model.parts![0], functionCall: { name: 'get_weather', args: { city: 'Rome' } } }] };
    const wrong: any = await ai.models.generateContent({ model: MODEL, contents: [ask, altered, answer], config }).catch((e) => e);
    expect(wrong.status).toBe(400);
    expect(wrong.message).toContain('Thought signature is not valid');

    const raw = (path: string, headers: Record<string, string>, body: unknown) => fetch(`${f.mock.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
    const unknown = await raw(`/v1beta/models/${MODEL}:generateContent`, { 'x-goog-api-key': up }, { model: MODEL, contents: [ask] });
    expect(unknown.status).toBe(400);
    expect((await unknown.json()).error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT', message: 'Invalid JSON payload received. Unknown name "model": Cannot find field.' });
    const inUrl = await raw(`/v1beta/models/${MODEL}:generateContent?key=${up}`, {}, { contents: [ask] });
    expect(inUrl.status).toBe(400);
    const none = await raw(`/v1beta/models/${MODEL}:generateContent`, {}, { contents: [ask] });
    expect((await none.json()).error.status).toBe('PERMISSION_DENIED');
  });
});

describe('@google/genai on a gemini key', () => {
  it('goes byte for byte, whole, as events and as a JSON array, billed once from the last usageMetadata', async () => {
    const { up, user } = await geminiUser('g-native');
    const usage = { prompt_tokens: 1000, cached_tokens: 400, completion_tokens: 60, reasoning_tokens: 25 };
    f.mock.behave(up, { text: 'It is sunny in Paris today.', usage, chunks: 4 });
    const ai = genai(user.key);
    const config = { temperature: 0.3, thinkingConfig: { thinkingBudget: 1024 } };
    const whole = await ai.models.generateContent({ model: MODEL, contents: [ask], config });
    expect(whole.text).toBe('It is sunny in Paris today.');
    expect(whole.usageMetadata).toEqual({ promptTokenCount: 1000, cachedContentTokenCount: 400, candidatesTokenCount: 35, thoughtsTokenCount: 25, totalTokenCount: 1060 });
    expect(last()).toMatchObject({ path: `/v1beta/models/${MODEL}:generateContent`, query: {}, credential: up });
    expect(last().headers.authorization).toBeUndefined();
    // The SDK's body as it sent it: no model, nothing added.
    expect(last().body).toEqual({ contents: [ask], generationConfig: config });

    const streamed = await collect(await ai.models.generateContentStream({ model: MODEL, contents: [ask], config }));
    expect(streamed).toMatchObject({ text: 'It is sunny in Paris today.', finishes: ['STOP'] });
    expect(streamed.usage).toMatchObject({ promptTokenCount: 1000, thoughtsTokenCount: 25, totalTokenCount: 1060 });
    expect(last()).toMatchObject({ path: `/v1beta/models/${MODEL}:streamGenerateContent`, query: { alt: 'sse' } });

    // Without alt=sse: a JSON array, the upstream asked for events (their usage read) and each one an element.
    const res = await fetch(`${f.gw.url}/v1beta/models/${MODEL}:streamGenerateContent`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-goog-api-key': user.key }, body: JSON.stringify({ contents: [ask] }),
    });
    expect(res.headers.get('content-type')).toContain('application/json');
    const array = await res.json() as any[];
    expect(array.map((c) => c.candidates[0].content.parts[0].text).join('')).toBe('It is sunny in Paris today.');
    expect(array.filter((c) => c.candidates[0].finishReason)).toHaveLength(1);
    expect(last().query).toEqual({ alt: 'sse' });

    const rows = await f.usage(user.id);
    expect(rows).toHaveLength(3);
    for (const r of rows) {
      // Every chunk carried a running usageMetadata: the last one is billed, never their sum.
      expect(r).toMatchObject({ model: MODEL, prompt: 1000, cached: 400, completion: 60, reasoning: 25, status: 'ok' });
      expect(r.credit_used).toBeCloseTo(bill({ input: 600, cached: 400, output: 60, reasoning: 25 }), 12);
    }
  });

  it('runs a function-calling loop with the signature the SDK keeps, whole and streamed', async () => {
    const { up, user } = await geminiUser('g-native-tools');
    f.mock.behave(up, { toolCall: call, text: 'Sunny, 21°C.' });
    const ai = genai(user.key);
    const config = { tools: [{ functionDeclarations: [weather] }] };
    for (const streamed of [false, true]) {
      const parts = streamed
        ? (await collect(await ai.models.generateContentStream({ model: MODEL, contents: [ask], config }))).parts
        : (await ai.models.generateContent({ model: MODEL, contents: [ask], config })).candidates![0].content!.parts!;
      const contents: Content[] = [ask, { role: 'model', parts }, { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { output: '21°C' } } }] }];
      const text = streamed
        ? (await collect(await ai.models.generateContentStream({ model: MODEL, contents, config }))).text
        : (await ai.models.generateContent({ model: MODEL, contents, config })).text;
      expect(text).toBe('Sunny, 21°C.');
    }
  });

  it('counts tokens and embeds natively', async () => {
    const { user } = await geminiUser('g-native-other');
    const ai = genai(user.key);
    const counted = await ai.models.countTokens({ model: MODEL, contents: [ask] });
    expect(counted.totalTokens).toBeGreaterThan(0);
    expect(last().path).toBe(`/v1beta/models/${MODEL}:countTokens`);
    const r = await ai.models.embedContent({ model: 'gemini-embed-test', contents: ['one', 'two'], config: { outputDimensionality: 4 } });
    expect(r.embeddings!.map((e) => e.values!.length)).toEqual([4, 4]);
    expect(last().path).toBe('/v1beta/models/gemini-embed-test:batchEmbedContents');
  });
});

describe('OpenAI and Anthropic clients on a gemini key: the thought signature survives the tool loop', () => {
  const parameters = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
  const tools: OpenAI.Chat.ChatCompletionFunctionTool[] = [{ type: 'function', function: { name: 'get_weather', description: 'Current weather of a city', parameters } }];
  const usage = { prompt_tokens: 500, cached_tokens: 100, completion_tokens: 40, reasoning_tokens: 10 };

  it('chat completions, whole and streamed (a stream that calls functions ends with tool_calls)', async () => {
    const { up, user } = await geminiUser('g-chat');
    f.mock.behave(up, { toolCall: call, text: 'Sunny, 21°C.', usage });
    const client = f.openai(user.key);
    for (const stream of [false, true]) {
      const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Weather in Paris?' }];
      let assistant: OpenAI.Chat.ChatCompletionMessageParam;
      if (stream) {
        const s = await client.chat.completions.create({ model: MODEL, messages, tools, stream: true, stream_options: { include_usage: true } });
        const calls: any[] = [];
        let finish: string | null = null;
        let streamedUsage: any;
        for await (const c of s) {
          for (const tc of c.choices[0]?.delta.tool_calls ?? []) calls[tc.index] = { id: tc.id, type: 'function', function: { name: tc.function!.name, arguments: tc.function!.arguments } };
          finish = c.choices[0]?.finish_reason ?? finish;
          if (c.usage) streamedUsage = c.usage;
        }
        expect(finish).toBe('tool_calls');
        expect(streamedUsage).toMatchObject({ prompt_tokens: 500, completion_tokens: 40, prompt_tokens_details: { cached_tokens: 100 }, completion_tokens_details: { reasoning_tokens: 10 } });
        assistant = { role: 'assistant', content: null, tool_calls: calls };
      } else {
        const r = await client.chat.completions.create({ model: MODEL, messages, tools });
        expect(r.choices[0].finish_reason).toBe('tool_calls');
        assistant = r.choices[0].message as OpenAI.Chat.ChatCompletionMessageParam;
      }
      const tc = (assistant as any).tool_calls[0];
      expect(tc.function).toEqual({ name: 'get_weather', arguments: '{"city":"Paris"}' });
      expect(tc.id).toContain('__thought__');
      expect(last()).toMatchObject({ path: `/v1beta/models/${MODEL}:${stream ? 'streamGenerateContent' : 'generateContent'}`, credential: up });
      expect(last().body).toMatchObject({
        systemInstruction: { parts: [{ text: 'Be brief.' }] },
        contents: [{ role: 'user', parts: [{ text: 'Weather in Paris?' }] }],
        tools: [{ functionDeclarations: [{ name: 'get_weather', parametersJsonSchema: parameters }] }],
      });
      messages.push(assistant, { role: 'tool', tool_call_id: tc.id, content: '21°C' });
      const text = stream
        ? await (async () => { let t = ''; for await (const c of await client.chat.completions.create({ model: MODEL, messages, tools, stream: true })) t += c.choices[0]?.delta.content ?? ''; return t; })()
        : (await client.chat.completions.create({ model: MODEL, messages, tools })).choices[0].message.content;
      expect(text).toBe('Sunny, 21°C.');
      // The mock checked it: the model turn went back with the signature it issued.
      expect((last().body as any).contents[1]).toEqual({ role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: thoughtSignatureOf('get_weather', { city: 'Paris' }) }] });
      expect((last().body as any).contents[2]).toEqual({ role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { output: '21°C' } } }] });
    }
    const rows = await f.usage(user.id);
    expect(rows).toHaveLength(4);
    for (const r of rows) {
      expect(r).toMatchObject({ prompt: 500, cached: 100, completion: 40, reasoning: 10, status: 'ok' });
      expect(r.credit_used).toBeCloseTo(bill({ input: 400, cached: 100, output: 40, reasoning: 10 }), 12);
    }
    // A client that drops the signature gets Google's 400 in its own shape.
    const dropped = await client.chat.completions.create({
      model: MODEL, tools,
      messages: [{ role: 'user', content: 'Weather in Paris?' }, { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] }, { role: 'tool', tool_call_id: 'call_1', content: '21°C' }],
    }).catch((e) => e);
    expect(dropped.status).toBe(400);
    expect(dropped.message).toContain('thought_signature');
  });

  it('the Responses API, whole and streamed', async () => {
    const { up, user } = await geminiUser('g-responses');
    f.mock.behave(up, { toolCall: call, text: 'Sunny, 21°C.', usage });
    const client = f.openai(user.key);
    const rtools: OpenAI.Responses.Tool[] = [{ type: 'function', name: 'get_weather', description: 'Current weather of a city', parameters, strict: false }];
    for (const stream of [false, true]) {
      const input: OpenAI.Responses.ResponseInput = [{ role: 'user', content: 'Weather in Paris?' }];
      let output: OpenAI.Responses.ResponseOutputItem[];
      if (stream) {
        let done: OpenAI.Responses.Response | undefined;
        for await (const e of await client.responses.create({ model: MODEL, input, tools: rtools, store: false, stream: true })) if (e.type === 'response.completed') done = e.response;
        output = done!.output;
      } else output = (await client.responses.create({ model: MODEL, input, tools: rtools, store: false })).output;
      const fc = output.find((o) => o.type === 'function_call') as OpenAI.Responses.ResponseFunctionToolCall;
      expect(fc).toMatchObject({ name: 'get_weather', arguments: '{"city":"Paris"}' });
      input.push(...(output as OpenAI.Responses.ResponseInputItem[]), { type: 'function_call_output', call_id: fc.call_id, output: '21°C' });
      const answer = stream
        ? await (async () => { let t = ''; for await (const e of await client.responses.create({ model: MODEL, input, tools: rtools, store: false, stream: true })) if (e.type === 'response.output_text.delta') t += e.delta; return t; })()
        : (await client.responses.create({ model: MODEL, input, tools: rtools, store: false })).output_text;
      expect(answer).toBe('Sunny, 21°C.');
      expect((last().body as any).contents[1].parts[0].thoughtSignature).toBe(thoughtSignatureOf('get_weather', { city: 'Paris' }));
    }
    const rows = await f.usage(user.id);
    expect(rows).toHaveLength(4);
    for (const r of rows) expect(r.credit_used).toBeCloseTo(bill({ input: 400, cached: 100, output: 40, reasoning: 10 }), 12);
  });

  it('Anthropic Messages, whole and streamed', async () => {
    const { up, user } = await geminiUser('g-anthropic');
    f.mock.behave(up, { toolCall: call, text: 'Sunny, 21°C.', usage });
    const client = f.anthropic(user.key);
    const atools = [{ name: 'get_weather', description: 'Current weather of a city', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] } }];
    for (const stream of [false, true]) {
      const messages: any[] = [{ role: 'user', content: 'Weather in Paris?' }];
      const first = stream
        ? await client.messages.stream({ model: MODEL, max_tokens: 200, messages, tools: atools }).finalMessage()
        : await client.messages.create({ model: MODEL, max_tokens: 200, messages, tools: atools });
      expect(first.stop_reason).toBe('tool_use');
      const use = first.content.find((b) => b.type === 'tool_use')!;
      expect(use).toMatchObject({ name: 'get_weather', input: { city: 'Paris' }, id: expect.stringMatching(/^[A-Za-z0-9_-]+$/) });
      messages.push({ role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: '21°C' }] });
      const second = stream
        ? await client.messages.stream({ model: MODEL, max_tokens: 200, messages, tools: atools }).finalMessage()
        : await client.messages.create({ model: MODEL, max_tokens: 200, messages, tools: atools });
      expect(second.content).toEqual([{ type: 'text', text: 'Sunny, 21°C.' }]);
      expect((last().body as any).contents[1].parts[0].thoughtSignature).toBe(thoughtSignatureOf('get_weather', { city: 'Paris' }));
    }
    // A gemini key has no Anthropic token count: the gateway answers its estimate, nothing goes upstream.
    const sent = f.mock.requests.length;
    expect((await client.messages.countTokens({ model: MODEL, messages: [{ role: 'user', content: 'Weather in Paris?' }] })).input_tokens).toBeGreaterThan(0);
    expect(f.mock.requests.length).toBe(sent);
    const rows = await f.usage(user.id);
    expect(rows).toHaveLength(4);
    for (const r of rows) expect(r.credit_used).toBeCloseTo(bill({ input: 400, cached: 100, output: 40, reasoning: 10 }), 12);
  });

  it('embeddings: /v1/embeddings as batchEmbedContents', async () => {
    const { up, user } = await geminiUser('g-embed');
    const r = await f.openai(user.key).embeddings.create({ model: 'gemini-embed-test', input: ['first text', 'second'], dimensions: 4 });
    expect(r.data.map((d) => [d.index, d.embedding.length])).toEqual([[0, 4], [1, 4]]);
    expect(last()).toMatchObject({ path: '/v1beta/models/gemini-embed-test:batchEmbedContents', credential: up });
    expect(last().body).toEqual({ requests: [
      { model: 'models/gemini-embed-test', content: { parts: [{ text: 'first text' }] }, outputDimensionality: 4 },
      { model: 'models/gemini-embed-test', content: { parts: [{ text: 'second' }] }, outputDimensionality: 4 },
    ] });
    const rows = await f.usage(user.id);
    expect(rows).toHaveLength(1);
    // Google reports no tokens for embeddings: the call is billed by the gateway's estimate of a whole answer without usage (settle.ts).
    expect(rows[0].status).toBe('ok');
    expect(rows[0].prompt).toBeGreaterThan(0);
    expect(rows[0].credit_used).toBeGreaterThan(0);
  });
});

describe('gemini key health', () => {
  it('puts a key answering 429 RESOURCE_EXHAUSTED to sleep and serves from the next', async () => {
    const level = nextLevel();
    const first = secret('g-429');
    const second = secret('g-spare');
    const firstId = await f.addKey(level, first, { config: { provider_type: 'gemini' } });
    await f.addKey(level, second, { config: { provider_type: 'gemini' } });
    f.mock.behave(first, { status: 429 });
    f.mock.behave(second, { text: 'Served by the spare.' });
    const user = await f.account({ level });
    for (let i = 0; i < 2; i++) expect((await genai(user.key).models.generateContent({ model: MODEL, contents: [ask] })).text).toBe('Served by the spare.');
    const keys = (await f.gw.root.get('/x-keys')).body;
    const list = (Array.isArray(keys) ? keys : keys.Keys ?? keys.Data ?? []) as { ID: number; Sleeping: boolean }[];
    expect(list.find((k) => k.ID === firstId)?.Sleeping).toBe(true);
    expect(await f.usage(user.id)).toHaveLength(2);
  });

  it('disables a key Google calls invalid (400 API_KEY_INVALID); the client\'s error carries neither secret nor host', async () => {
    const level = nextLevel();
    const bad = secret('g-invalid');
    const badId = await f.addKey(level, bad, { config: { provider_type: 'gemini' } });
    f.mock.behave(bad, { status: 401, echoCredentials: true });
    const user = await f.account({ level });
    const r = await f.gw.as(user.key).post('/v1/chat/completions', { model: MODEL, messages: [{ role: 'user', content: 'Hi' }] });
    expect(r.status).toBeGreaterThanOrEqual(400);
    for (const s of [bad, '127.0.0.1']) expect(r.text).not.toContain(s);
    await f.gw.gateway.proxy.health.settle();
    const disabled = (await f.gw.root.get('/x-conf')).body.DisabledKeys as { ID: number; Reason: string }[];
    const reason = disabled.find((k) => k.ID === badId)?.Reason ?? '';
    expect(reason).toMatch(/401|API key not valid/);
    for (const s of [bad, '127.0.0.1']) expect(reason).not.toContain(s);
    expect(await f.usage(user.id)).toHaveLength(0);
  });

  it('relays Google\'s own 400 to a Gemini client in Google\'s shape, without the secret or the host it echoed', async () => {
    const { up, user, keyId } = await geminiUser('g-echo');
    f.mock.behave(up, { status: 400, echoCredentials: true });
    const err: any = await genai(user.key).models.generateContent({ model: MODEL, contents: [ask] }).catch((e) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err.status).toBe(400);
    expect(JSON.parse(err.message).error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' });
    for (const s of [up, '127.0.0.1', new URL(f.mock.url).host]) expect(err.message).not.toContain(s);
    await f.gw.gateway.proxy.health.settle();
    const disabled = (await f.gw.root.get('/x-conf')).body.DisabledKeys as { ID: number }[];
    expect(disabled.some((k) => k.ID === keyId)).toBe(false);
  });
});
