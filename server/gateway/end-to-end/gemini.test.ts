/**
 * Gemini as a client format: the real `@google/genai` SDK on a standard (OpenAI-format) key and
 * on an Anthropic key, whole and streamed, with a two-step function-calling loop; countTokens,
 * the model list, `?key=` and the JSON-array stream over plain HTTP; errors in Google's shape.
 * Every call is billed once with its token classes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, FunctionCallingConfigMode, GoogleGenAI, Type, type Content } from '@google/genai';
import { secret, startProxyFixture, type ProxyFixture } from '../test-fixture';
import { signThinking } from '../../testing/mock-upstream/anthropic';
import { estimateInputTokens } from '../../domain/pricing/estimate';

let f: ProxyFixture;
const PRICE = { InputText: 1, CachedText: 0.1, CacheWrite: 1.25, OutputText: 5, ReasonText: 7 };
const CLAUDE = 'claude-test-1';
const GPT = 'gpt-test-1';
beforeAll(async () => {
  f = await startProxyFixture();
  await f.config({ PRICING: JSON.stringify({ ChatPricing: { [CLAUDE]: PRICE, [GPT]: PRICE } }) });
});
afterAll(async () => { await f?.close(); });

const bill = (u: { input: number; cached?: number; output: number; reasoning?: number }) =>
  (u.input * PRICE.InputText + (u.cached ?? 0) * PRICE.CachedText + (u.output - (u.reasoning ?? 0)) * PRICE.OutputText + (u.reasoning ?? 0) * PRICE.ReasonText) / 1e6;
const lastBody = () => f.mock.requests.at(-1)!.body as Record<string, any>;
const genai = (key: string, apiVersion?: string) => new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: f.gw.url, ...(apiVersion ? { apiVersion } : {}) } });

async function level(n: number, upstream: string, anthropic = false) {
  await f.addKey(n, upstream, { config: anthropic ? { provider_type: 'anthropic' } : undefined });
  return f.account({ level: n });
}

const weather = {
  name: 'get_weather',
  description: 'Current weather of a city',
  parameters: { type: Type.OBJECT, properties: { city: { type: Type.STRING, description: 'City name' } }, required: ['city'] },
};
const weatherJsonSchema = { type: 'object', properties: { city: { type: 'string', description: 'City name' } }, required: ['city'] };
const ask: Content = { role: 'user', parts: [{ text: 'What is the weather in Paris?' }] };

/** A streamed answer as one response: text joined, function calls and finish reasons collected, the last usage. */
async function collect(stream: AsyncIterable<any>) {
  let text = '';
  const parts: any[] = [];
  const finishes: string[] = [];
  let usage: any;
  let chunks = 0;
  for await (const c of stream) {
    chunks++;
    const cand = c.candidates?.[0];
    for (const p of cand?.content?.parts ?? []) {
      if (p.text && !p.thought) text += p.text;
      if (p.functionCall || p.thought) parts.push(p);
    }
    if (cand?.finishReason) finishes.push(cand.finishReason);
    if (c.usageMetadata) usage = c.usageMetadata;
  }
  return { text, parts, finishes, usage, chunks };
}

describe('@google/genai on a standard key', () => {
  it('runs a function-calling loop, whole and streamed, through chat completions, billed once each', async () => {
    const up = secret('g2o-tools');
    const user = await level(301, up);
    const usage = { prompt_tokens: 900, completion_tokens: 40, cached_tokens: 300 };
    f.mock.behave(up, { toolCall: { name: 'get_weather', arguments: { city: 'Paris' } }, text: 'It is 18°C in Paris.', usage });
    const ai = genai(user.key);
    const config = {
      tools: [{ functionDeclarations: [weather] }],
      toolConfig: { functionCallingConfig: { mode: FunctionCallingConfigMode.AUTO } },
      systemInstruction: 'You answer about weather.',
      maxOutputTokens: 500,
      temperature: 0.5,
      stopSequences: ['END'],
    };
    for (const streamed of [false, true]) {
      let call: any;
      if (streamed) {
        const r = await collect(await ai.models.generateContentStream({ model: GPT, contents: [ask], config }));
        expect(r.finishes).toEqual(['STOP']);
        expect(r.usage).toMatchObject({ promptTokenCount: 900, cachedContentTokenCount: 300, candidatesTokenCount: 40, totalTokenCount: 940 });
        call = r.parts.find((p) => p.functionCall)!.functionCall;
        expect(f.mock.requests.at(-1)!.path).toBe('/v1/chat/completions');
        expect(lastBody().stream_options).toEqual({ include_usage: true });
      } else {
        const r = await ai.models.generateContent({ model: GPT, contents: [ask], config });
        expect(r.candidates![0].finishReason).toBe('STOP');
        expect(r.functionCalls).toHaveLength(1);
        call = r.functionCalls![0];
        expect(r.usageMetadata).toMatchObject({ promptTokenCount: 900, cachedContentTokenCount: 300, candidatesTokenCount: 40, totalTokenCount: 940 });
      }
      expect(call).toMatchObject({ name: 'get_weather', args: { city: 'Paris' }, id: expect.any(String) });
      const rec = f.mock.requests.at(-1)!;
      expect(rec.credential).toBe(up);
      expect(lastBody()).toMatchObject({
        model: GPT, temperature: 0.5, stop: ['END'], tool_choice: 'auto',
        messages: [{ role: 'system', content: 'You answer about weather.' }, { role: 'user', content: 'What is the weather in Paris?' }],
        tools: [{ type: 'function', function: { name: 'get_weather', description: 'Current weather of a city', parameters: weatherJsonSchema } }],
      });
      // The second step, the way the SDK's users write it: the model turn as received, then the function's response.
      const contents: Content[] = [ask, { role: 'model', parts: [{ functionCall: call }] }, { role: 'user', parts: [{ functionResponse: { id: call.id, name: 'get_weather', response: { output: '18°C' } } }] }];
      const answer = streamed
        ? (await collect(await ai.models.generateContentStream({ model: GPT, contents, config }))).text
        : (await ai.models.generateContent({ model: GPT, contents, config })).text;
      expect(answer).toBe('It is 18°C in Paris.');
      // The mock refuses a tool message that does not follow its call: the response went where it belongs.
      expect(lastBody().messages.slice(2)).toEqual([
        { role: 'assistant', content: null, tool_calls: [{ id: call.id, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
        { role: 'tool', tool_call_id: call.id, content: '18°C' },
      ]);
    }
    const rows = await f.usage(user.id);
    expect(rows.map((r) => r.endpoint).sort()).toEqual([...Array(2).fill('/v1beta/models/{model}:generateContent'), ...Array(2).fill('/v1beta/models/{model}:streamGenerateContent')]);
    for (const r of rows) {
      expect(r).toMatchObject({ model: GPT, prompt: 900, cached: 300, completion: 40, status: 'ok' });
      expect(r.credit_used).toBeCloseTo(bill({ input: 600, cached: 300, output: 40 }), 12);
    }
  });

  it('answers a function response without an ID by name, and a call forced by ANY', async () => {
    const up = secret('g2o-noid');
    const user = await level(302, up);
    f.mock.behave(up, { toolCall: { name: 'get_weather', arguments: { city: 'Oslo' } }, text: 'Cold.' });
    const ai = genai(user.key);
    const config = { tools: [{ functionDeclarations: [weather] }], toolConfig: { functionCallingConfig: { mode: FunctionCallingConfigMode.ANY, allowedFunctionNames: ['get_weather'] } } };
    await ai.models.generateContent({ model: GPT, contents: [ask], config });
    expect(lastBody().tool_choice).toEqual({ type: 'function', function: { name: 'get_weather' } });
    const contents: Content[] = [ask, { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Oslo' } } }] }, { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { temp: -3 } } }] }];
    expect((await ai.models.generateContent({ model: GPT, contents, config })).text).toBe('Cold.');
    const [assistant, tool] = lastBody().messages.slice(1);
    expect(tool).toEqual({ role: 'tool', tool_call_id: assistant.tool_calls[0].id, content: '{"temp":-3}' });
  });
});

describe('@google/genai on an Anthropic key', () => {
  it('runs a function-calling loop with thoughts, whole and streamed: the thought signature goes back to Anthropic', async () => {
    const up = secret('g2a-tools');
    const user = await level(311, up, true);
    const usage = { prompt_tokens: 1000, completion_tokens: 60, reasoning_tokens: 25 };
    f.mock.behave(up, { toolCall: { name: 'get_weather', arguments: { city: 'Paris' } }, thinking: 'I need the weather tool.', text: 'Sunny, 21°C.', usage });
    const ai = genai(user.key);
    const config = { tools: [{ functionDeclarations: [weather] }], thinkingConfig: { thinkingBudget: 2048, includeThoughts: true }, maxOutputTokens: 4000, topK: 20 };
    for (const streamed of [false, true]) {
      let parts: any[];
      if (streamed) {
        const r = await collect(await ai.models.generateContentStream({ model: CLAUDE, contents: [ask], config }));
        expect(r.finishes).toEqual(['STOP']);
        expect(r.usage).toMatchObject({ promptTokenCount: 1000, candidatesTokenCount: 35, thoughtsTokenCount: 25, totalTokenCount: 1060 });
        parts = r.parts;
      } else {
        const r = await ai.models.generateContent({ model: CLAUDE, contents: [ask], config });
        expect(r.candidates![0].finishReason).toBe('STOP');
        expect(r.usageMetadata).toMatchObject({ promptTokenCount: 1000, candidatesTokenCount: 35, thoughtsTokenCount: 25, totalTokenCount: 1060 });
        parts = r.candidates![0].content!.parts!;
      }
      const rec = f.mock.requests.at(-1)!;
      expect(rec).toMatchObject({ path: '/v1/messages', credential: up });
      expect(lastBody()).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 2048 }, max_tokens: 4000, tools: [{ name: 'get_weather', input_schema: weatherJsonSchema }] });
      expect(lastBody().top_k).toBeUndefined();
      const thought = parts.filter((p) => p.thought);
      expect(thought.map((p) => p.text).join('')).toBe('I need the weather tool.');
      expect(thought.find((p) => p.thoughtSignature)!.thoughtSignature).toBe(signThinking('I need the weather tool.'));
      const call = parts.find((p) => p.functionCall)!.functionCall;
      expect(call).toMatchObject({ name: 'get_weather', args: { city: 'Paris' }, id: expect.stringMatching(/^toolu_/) });
      // The model turn sent back as received (thought parts and signature included): the mock checks the signature.
      const contents: Content[] = [ask, { role: 'model', parts }, { role: 'user', parts: [{ functionResponse: { id: call.id, name: 'get_weather', response: { output: '21°C, sunny' } } }] }];
      const answer = streamed
        ? (await collect(await ai.models.generateContentStream({ model: CLAUDE, contents, config }))).text
        : (await ai.models.generateContent({ model: CLAUDE, contents, config })).text;
      expect(answer).toBe('Sunny, 21°C.');
      expect(lastBody().messages.slice(1)).toEqual([
        { role: 'assistant', content: [
          { type: 'thinking', thinking: 'I need the weather tool.', signature: signThinking('I need the weather tool.') },
          { type: 'tool_use', id: call.id, name: 'get_weather', input: { city: 'Paris' } },
        ] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: '21°C, sunny' }] },
      ]);
    }
    const rows = await f.usage(user.id);
    expect(rows.map((r) => r.endpoint).sort()).toEqual([...Array(2).fill('/v1beta/models/{model}:generateContent'), ...Array(2).fill('/v1beta/models/{model}:streamGenerateContent')]);
    for (const r of rows) {
      expect(r).toMatchObject({ model: CLAUDE, prompt: 1000, completion: 60, reasoning: 25, status: 'ok' });
      expect(r.credit_used).toBeCloseTo(bill({ input: 1000, output: 60, reasoning: 25 }), 12);
    }
  });

  it('passes topK to Anthropic without thinking, and an image inline', async () => {
    const up = secret('g2a-image');
    const user = await level(312, up, true);
    f.mock.behave(up, { text: 'Red.' });
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
    const r = await genai(user.key).models.generateContent({
      model: CLAUDE,
      contents: [{ role: 'user', parts: [{ text: 'Colour?' }, { inlineData: { mimeType: 'image/png', data: png } }] }],
      config: { topK: 20, maxOutputTokens: 100 },
    });
    expect(r.text).toBe('Red.');
    expect(lastBody()).toMatchObject({
      top_k: 20, max_tokens: 100,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Colour?' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } }] }],
    });
  });
});

describe('the other Gemini routes', () => {
  it('counts tokens without billing, lists and gets models, on /v1 and /v1beta', async () => {
    const up = secret('g-count');
    const user = await level(321, up);
    for (const version of [undefined, 'v1beta']) {
      const ai = genai(user.key, version);
      const counted = await ai.models.countTokens({ model: GPT, contents: [ask] });
      expect(counted.totalTokens).toBe(estimateInputTokens({ contents: [ask] }, Buffer.from(JSON.stringify({ contents: [ask] })), GPT));
      const names: string[] = [];
      for await (const m of await ai.models.list()) names.push(m.name!);
      expect(names).toContain(`models/${GPT}`);
      const model = await ai.models.get({ model: GPT });
      expect(model).toMatchObject({ name: `models/${GPT}`, supportedActions: ['generateContent', 'streamGenerateContent', 'countTokens'] });
      const missing = await ai.models.get({ model: 'no-such-model' }).catch((e) => e);
      expect(missing).toBeInstanceOf(ApiError);
      expect(missing.status).toBe(404);
    }
    expect(f.mock.requests.filter((r) => r.credential === up)).toHaveLength(0);
    expect(await f.usage(user.id)).toEqual([]);
    // OpenAI's model list is untouched on the same path.
    const openai = await fetch(`${f.gw.url}/v1/models`, { headers: { authorization: `Bearer ${user.key}` } });
    expect((await openai.json()).object).toBe('list');
  });

  it('takes the key as ?key=, streams a JSON array without alt=sse, and keeps the key out of the request log', async () => {
    const up = secret('g-query');
    const user = await level(322, up);
    f.mock.behave(up, { text: 'Hello there.', usage: { prompt_tokens: 10, completion_tokens: 3 } });
    const from = f.gw.logs.length;
    const res = await fetch(`${f.gw.url}/v1beta/models/${GPT}:streamGenerateContent?key=${user.key}`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ contents: [ask] }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    const chunks = JSON.parse(await res.text()) as any[];
    expect(chunks.map((c) => c.candidates[0].content.parts.map((p: any) => p.text).join('')).join('')).toBe('Hello there.');
    expect(chunks.filter((c) => c.candidates[0].finishReason)).toHaveLength(1);
    expect(chunks.at(-1)).toMatchObject({ candidates: [{ finishReason: 'STOP' }], usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 3, totalTokenCount: 13 } });
    expect(chunks.slice(0, -1).every((c) => c.usageMetadata === undefined)).toBe(true);
    const rows = await f.usage(user.id);
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(user.key);
    expect(rows[0]).toMatchObject({ endpoint: '/v1beta/models/{model}:streamGenerateContent', prompt: 10, completion: 3 });
    // The access log names the route by its canonical path: neither the model's path nor the query (the key) is in it.
    const logs = f.gw.logs.slice(from);
    expect(logs.join('\n')).not.toContain(user.key);
    const line = logs.map((l) => JSON.parse(l)).find((l) => l.event === 'proxy_request');
    expect(line).toMatchObject({ path: '/v1beta/models/{model}:streamGenerateContent', status: 200, model: GPT });
    // Nor does the upstream's URL carry it.
    expect(f.mock.requests.at(-1)!.path).toBe('/v1/chat/completions');
  });
});

describe('interrupted streams', () => {
  it('end with an error in Google\'s shape, as events (the SDK raises) and inside the JSON array', async () => {
    const up = secret('g-cut');
    const user = await level(351, up);
    f.mock.behave(up, { text: 'one two three four five six', chunks: 4, cutAfterChunks: 2 });
    const failed = await collect(await genai(user.key).models.generateContentStream({ model: GPT, contents: [ask] })).catch((e) => e);
    expect(failed).toBeInstanceOf(Error);
    expect(String(failed.message)).toContain('interrupted');
    const res = await fetch(`${f.gw.url}/v1beta/models/${GPT}:streamGenerateContent`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-goog-api-key': user.key }, body: JSON.stringify({ contents: [ask] }),
    });
    // What arrived before the connection was closed: the array is closed around the error, so a client parsing it reads it.
    let text = '';
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    try {
      for (let r = await reader.read(); !r.done; r = await reader.read()) text += decoder.decode(r.value, { stream: true });
    } catch { /* the connection closed without the terminating chunk */ }
    const chunks = JSON.parse(text) as any[];
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.at(-1).error).toMatchObject({ code: 500, status: 'INTERNAL', message: expect.stringContaining('interrupted') });
    expect(chunks.some((c) => c.candidates?.[0]?.finishReason)).toBe(false);
  });
});

describe('embeddings', () => {
  const EMBED = 'embed-test-1';
  it('embeds through /v1/embeddings, batch (the SDK) and one (embedContent), billed by the input tokens; an Anthropic key has none', async () => {
    await f.config({ PRICING: JSON.stringify({ ChatPricing: { [CLAUDE]: PRICE, [GPT]: PRICE, [EMBED]: { InputText: 0.1, OutputText: 0 } } }) });
    const up = secret('g-embed');
    const user = await level(341, up);
    f.mock.behave(up, { usage: { prompt_tokens: 12, completion_tokens: 0 } });
    const ai = genai(user.key);
    const r = await ai.models.embedContent({ model: EMBED, contents: ['first text', 'second text'], config: { outputDimensionality: 4, taskType: 'RETRIEVAL_DOCUMENT' } });
    expect(r.embeddings).toHaveLength(2);
    expect(r.embeddings!.map((e) => e.values!.length)).toEqual([4, 4]);
    expect(f.mock.requests.at(-1)!.path).toBe('/v1/embeddings');
    expect(lastBody()).toEqual({ model: EMBED, input: ['first text', 'second text'], dimensions: 4 });
    const one = await fetch(`${f.gw.url}/v1beta/models/${EMBED}:embedContent`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-goog-api-key': user.key }, body: JSON.stringify({ content: { parts: [{ text: 'alone' }] } }),
    });
    expect(one.status).toBe(200);
    expect((await one.json()).embedding.values).toHaveLength(8);
    const rows = await f.usage(user.id);
    expect(rows.map((x) => [x.endpoint, x.prompt, x.completion])).toEqual([
      ['/v1beta/models/{model}:batchEmbedContents', 12, 0], ['/v1beta/models/{model}:embedContent', 12, 0],
    ]);
    for (const x of rows) expect(x.credit_used).toBeCloseTo(12 * 0.1 / 1e6, 12);
    const anthropicUp = secret('g-embed-a');
    const claudeUser = await level(342, anthropicUp, true);
    const refused: any = await genai(claudeUser.key).models.embedContent({ model: EMBED, contents: ['x'] }).catch((e) => e);
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused.status).toBe(400);
    expect(JSON.parse(refused.message).error.status).toBe('INVALID_ARGUMENT');
  });
});

describe('errors in Google\'s shape', () => {
  const raw = (path: string, key: string, body: unknown) => fetch(`${f.gw.url}${path}`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-goog-api-key': key }, body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const googleError = async (res: Response, code: number, status: string) => {
    expect(res.status).toBe(code);
    const body = await res.json();
    expect(body.error).toMatchObject({ code, status, message: expect.any(String) });
    return body.error;
  };

  it('a bad key, an unpriced model, too little credit, a malformed body, what only Google has', async () => {
    const up = secret('g-errors');
    const user = await level(331, up);
    const bad = await genai('sk-not-a-key').models.generateContent({ model: GPT, contents: 'hi' }).catch((e) => e);
    expect(bad).toBeInstanceOf(ApiError);
    expect(bad.status).toBe(401);
    expect(JSON.parse(bad.message).error.status).toBe('UNAUTHENTICATED');
    await googleError(await raw(`/v1beta/models/${GPT}:generateContent`, 'sk-not-a-key', { contents: [] }), 401, 'UNAUTHENTICATED');
    const unpriced = await googleError(await raw('/v1beta/models/no-such-model:generateContent', user.key, { contents: [ask] }), 403, 'PERMISSION_DENIED');
    expect(unpriced.details[0]).toMatchObject({ reason: 'model_not_priced', domain: 'switchyard' });
    const poor = await f.account({ level: 331, credit: 0 });
    const refused = await googleError(await raw(`/v1beta/models/${GPT}:generateContent`, poor.key, { contents: [ask] }), 402, 'RESOURCE_EXHAUSTED');
    expect(refused.details[0].reason).toBe('insufficient_balance');
    // Admission holds generationConfig.maxOutputTokens, and names it when a lower one would fit.
    const some = await f.account({ level: 331, credit: 3 });
    const held = await googleError(await raw(`/v1beta/models/${GPT}:generateContent`, some.key, { contents: [ask], generationConfig: { maxOutputTokens: 1_000_000 } }), 402, 'RESOURCE_EXHAUSTED');
    expect(held.message).toContain('1000000 output tokens');
    expect(held.message).toMatch(/generationConfig\.maxOutputTokens of \d+ or less/);
    const fits = await raw(`/v1beta/models/${GPT}:generateContent`, some.key, { contents: [ask], generationConfig: { maxOutputTokens: 100 } });
    expect(fits.status).toBe(200);
    await googleError(await raw(`/v1beta/models/${GPT}:generateContent`, user.key, '{"contents": '), 400, 'INVALID_ARGUMENT');
    const shape = await googleError(await raw(`/v1beta/models/${GPT}:generateContent`, user.key, { contents: 'hi' }), 400, 'INVALID_ARGUMENT');
    expect(shape.message).toContain('contents');
    const two = await googleError(await raw(`/v1beta/models/${GPT}:generateContent`, user.key, { contents: [ask], generationConfig: { candidateCount: 2 } }), 400, 'INVALID_ARGUMENT');
    expect(two.message).toContain('candidateCount');
    const cached = await googleError(await raw(`/v1beta/models/${GPT}:generateContent`, user.key, { contents: [ask], cachedContent: 'cachedContents/x' }), 400, 'INVALID_ARGUMENT');
    expect(cached.message).toContain('cachedContent');
    const search = await googleError(await raw(`/v1beta/models/${GPT}:generateContent`, user.key, { contents: [ask], tools: [{ googleSearch: {} }] }), 400, 'INVALID_ARGUMENT');
    expect(search.message).toContain('googleSearch');
    await googleError(await raw(`/v1beta/models/${GPT}:embedSomething`, user.key, { contents: [ask] }), 404, 'NOT_FOUND');
    // AllowModels reads the model in the path.
    const narrow = await f.account({ level: 331, allowModels: CLAUDE });
    const denied = await googleError(await raw(`/v1/models/${GPT}:generateContent`, narrow.key, { contents: [ask] }), 403, 'PERMISSION_DENIED');
    expect(denied.details[0].reason).toBe('model_not_allowed');
    expect(denied.message).toContain(GPT);
    // Nothing but the call that fitted reached the provider, and nothing else was billed.
    expect(f.mock.requests.filter((r) => r.credential === up)).toHaveLength(1);
    expect(await f.usage(user.id)).toEqual([]);
    expect(await f.usage(some.id)).toHaveLength(1);
  });
});
