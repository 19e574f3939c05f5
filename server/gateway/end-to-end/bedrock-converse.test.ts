/**
 * AWS Bedrock keys serving models other than Claude through Converse (`/model/{id}/converse`,
 * `/converse-stream`): the real openai (chat and Responses), @anthropic-ai/sdk and
 * @google/genai SDKs, whole and streamed, with tool round trips, against the strict mock;
 * every call billed once and exactly from Converse's usage (cache reads and writes at their
 * prices); a cut answer says so; token counts are the gateway's estimate, free.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GoogleGenAI, Type, type Content } from '@google/genai';
import { drain, secret, startProxyFixture, nextLevel, type ProxyFixture } from '../test-fixture';

let f: ProxyFixture;
const PRICE = { InputText: 1, CachedText: 0.1, CacheWrite: 1.25, OutputText: 5 };
/** A client-facing name the key maps to a cross-region inference profile, and a plain Bedrock model ID sent as it is. */
const NOVA = 'nova-pro-test';
const NOVA_PROFILE = 'us.amazon.nova-pro-v1:0';
const LLAMA = 'meta.llama3-1-70b-instruct-v1:0';
const GPT_OSS = 'openai.gpt-oss-120b-1:0';
const usage = { prompt_tokens: 200, completion_tokens: 40, cached_tokens: 120, cache_write_tokens: 30 };
/** The bill of `usage`: input less cache reads and writes as input, reads at the cached price, writes at the cache-write price. */
const bill = (u: { prompt_tokens: number; completion_tokens: number; cached_tokens?: number; cache_write_tokens?: number }) => {
  const cached = u.cached_tokens ?? 0;
  const written = u.cache_write_tokens ?? 0;
  return ((u.prompt_tokens - cached - written) * PRICE.InputText + cached * PRICE.CachedText + written * PRICE.CacheWrite + u.completion_tokens * PRICE.OutputText) / 1e6;
};
let serial = 0;

beforeAll(async () => {
  f = await startProxyFixture();
  // The same price under every name the call may be billed by (the client's, the Bedrock ID).
  await f.config({ PRICING: JSON.stringify({ ChatPricing: { [NOVA]: PRICE, [NOVA_PROFILE]: PRICE, [LLAMA]: PRICE, [GPT_OSS]: PRICE } }) });
});
afterAll(async () => { await f?.close(); });

/** A Bedrock key on `level`: SigV4 (trusted by the mock) or a Bedrock API key. */
async function bedrockKey(level: number, sigv4 = true) {
  const up = secret('converse');
  const config: Record<string, unknown> = { provider_type: 'bedrock', region: 'us-east-1', models: { [NOVA]: NOVA_PROFILE } };
  if (sigv4) {
    const id = `AKIACONV${String(++serial).padStart(12, '0')}`;
    config.access_key_id = id;
    f.mock.trustAwsKey(id, up);
  }
  await f.addKey(level, up, { config });
  return up;
}

const lastRequest = () => f.mock.requests.at(-1)!;
const lastBody = () => lastRequest().body as Record<string, any>;
const conversePath = (id: string, stream: boolean) => `/model/${encodeURIComponent(id)}/${stream ? 'converse-stream' : 'converse'}`;
const weatherTool = { type: 'function' as const, function: { name: 'get_weather', description: 'Weather of a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } };

async function expectBilled(accountId: number, n: number, model: string, u = usage) {
  const rows = await f.usage(accountId);
  expect(rows).toHaveLength(n);
  for (const r of rows) {
    expect(r).toMatchObject({ model, prompt: u.prompt_tokens, completion: u.completion_tokens, cached: u.cached_tokens ?? 0, status: 'ok' });
    expect(r.credit_used).toBeCloseTo(bill(u), 12);
  }
}

describe('the openai SDK on a Bedrock key serving Nova through Converse', () => {
  it('runs a tool loop whole and streamed, with toolConfig, toolUse and toolResult, billed exactly', async () => {
    const level = nextLevel();
    const up = await bedrockKey(level);
    f.mock.behave(up, { usage, toolCall: { name: 'get_weather', arguments: { city: 'Paris' } }, text: 'It is 18°C.' });
    const user = await f.account({ level });
    const client = f.openai(user.key);
    const ask = { role: 'user' as const, content: 'Weather in Paris?' };
    for (const streamed of [false, true]) {
      let call: { id: string; name: string; args: string };
      if (streamed) {
        const s = await client.chat.completions.create({ model: NOVA, messages: [{ role: 'system', content: 'Be brief.' }, ask], tools: [weatherTool], tool_choice: 'auto', stream: true, stream_options: { include_usage: true } });
        const acc = { id: '', name: '', args: '' };
        let finish: string | null = null;
        let got: unknown;
        for await (const c of s) {
          const tc = c.choices[0]?.delta.tool_calls?.[0];
          if (tc?.id) acc.id = tc.id;
          if (tc?.function?.name) acc.name = tc.function.name;
          if (tc?.function?.arguments) acc.args += tc.function.arguments;
          finish = c.choices[0]?.finish_reason ?? finish;
          if (c.usage) got = c.usage;
        }
        expect(finish).toBe('tool_calls');
        expect(got).toMatchObject({ prompt_tokens: 200, completion_tokens: 40, prompt_tokens_details: { cached_tokens: 120 } });
        call = acc;
      } else {
        const r = await client.chat.completions.create({ model: NOVA, messages: [{ role: 'system', content: 'Be brief.' }, ask], tools: [weatherTool], tool_choice: 'auto' });
        expect(r.choices[0].finish_reason).toBe('tool_calls');
        expect(r.model).toBe(NOVA);
        expect(r.usage).toMatchObject({ prompt_tokens: 200, completion_tokens: 40, prompt_tokens_details: { cached_tokens: 120 } });
        const tc = r.choices[0].message.tool_calls![0] as { id: string; function: { name: string; arguments: string } };
        call = { id: tc.id, name: tc.function.name, args: tc.function.arguments };
      }
      expect(call.name).toBe('get_weather');
      expect(JSON.parse(call.args)).toEqual({ city: 'Paris' });
      const rec = lastRequest();
      expect(rec.path).toBe(conversePath(NOVA_PROFILE, streamed));
      expect(rec.credential).toBe(up);
      expect(rec.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIACONV/);
      expect(rec.body).toEqual({
        messages: [{ role: 'user', content: [{ text: 'Weather in Paris?' }] }],
        system: [{ text: 'Be brief.' }],
        toolConfig: { tools: [{ toolSpec: { name: 'get_weather', description: 'Weather of a city', inputSchema: { json: weatherTool.function.parameters } } }], toolChoice: { auto: {} } },
      });
      const next = await client.chat.completions.create({
        model: NOVA, tools: [weatherTool],
        messages: [ask, { role: 'assistant', content: null, tool_calls: [{ id: call.id, type: 'function', function: { name: call.name, arguments: call.args } }] }, { role: 'tool', tool_call_id: call.id, content: '18°C' }],
      });
      expect(next.choices[0].message.content).toBe('It is 18°C.');
      expect(next.choices[0].finish_reason).toBe('stop');
      expect(lastBody().messages.slice(1)).toEqual([
        { role: 'assistant', content: [{ toolUse: { toolUseId: call.id, name: 'get_weather', input: { city: 'Paris' } } }] },
        { role: 'user', content: [{ toolResult: { toolUseId: call.id, content: [{ text: '18°C' }] } }] },
      ]);
    }
    await expectBilled(user.id, 4, NOVA);
  });
});

describe('a plain Bedrock model ID (Llama) through Converse', () => {
  it('sends inferenceConfig and an image as bytes, and says a cut answer was cut (length), whole and streamed', async () => {
    const level = nextLevel();
    const up = await bedrockKey(level, false);
    f.mock.behave(up, { text: 'one two three four five six seven eight nine ten' });
    const user = await f.account({ level });
    const client = f.openai(user.key);
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
    const messages = [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'Count' }, { type: 'image_url' as const, image_url: { url: `data:image/png;base64,${png}` } }] }];
    const whole = await client.chat.completions.create({ model: LLAMA, messages, max_tokens: 3, temperature: 0.5, top_p: 0.9, stop: ['nine'] });
    expect(whole.choices[0].finish_reason).toBe('length');
    expect(whole.choices[0].message.content).toBe('one two thre');
    expect(lastRequest().path).toBe(conversePath(LLAMA, false));
    expect(lastRequest().headers.authorization).toBe(`Bearer ${up}`);
    expect(lastBody()).toEqual({
      messages: [{ role: 'user', content: [{ text: 'Count' }, { image: { format: 'png', source: { bytes: png } } }] }],
      inferenceConfig: { maxTokens: 3, temperature: 0.5, topP: 0.9, stopSequences: ['nine'] },
    });
    const s = await client.chat.completions.create({ model: LLAMA, messages, max_tokens: 3, stream: true });
    let text = '';
    let finish: string | null = null;
    for await (const c of s) {
      text += c.choices[0]?.delta.content ?? '';
      finish = c.choices[0]?.finish_reason ?? finish;
    }
    expect(text).toBe('one two thre');
    expect(finish).toBe('length');
    const stopped = await client.chat.completions.create({ model: LLAMA, messages, stop: 'four' });
    expect(stopped.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: 'one two three ' } });
    expect((await f.usage(user.id)).every((r) => r.credit_used > 0)).toBe(true);
  });

  it('counts tokens with the gateway\'s estimate (Bedrock counts Claude models only), free', async () => {
    const level = nextLevel();
    await bedrockKey(level);
    const user = await f.account({ level });
    const before = f.mock.requests.length;
    const counted = await f.anthropic(user.key).messages.countTokens({ model: LLAMA, messages: [{ role: 'user', content: 'How many tokens is this sentence?' }] });
    expect(counted.input_tokens).toBeGreaterThan(0);
    expect(f.mock.requests.length).toBe(before);
    expect(await f.usage(user.id)).toHaveLength(0);
  });
});

describe('reasoning through Converse', () => {
  it('asks gpt-oss for it in additionalModelRequestFields and gives its reasoning text back, whole and streamed', async () => {
    const level = nextLevel();
    const up = await bedrockKey(level);
    f.mock.behave(up, { text: 'Four.', thinking: 'Two and two make four.' });
    const user = await f.account({ level });
    const client = f.openai(user.key);
    const params = { model: GPT_OSS, reasoning_effort: 'low' as const, messages: [{ role: 'user' as const, content: '2+2?' }] };
    const whole = await client.chat.completions.create(params);
    expect(whole.choices[0].message).toMatchObject({ content: 'Four.', reasoning_content: 'Two and two make four.' });
    expect(lastBody().additionalModelRequestFields).toEqual({ reasoning_effort: 'low' });
    let reasoning = '';
    let text = '';
    for await (const c of await client.chat.completions.create({ ...params, stream: true })) {
      reasoning += (c.choices[0]?.delta as { reasoning_content?: string } | undefined)?.reasoning_content ?? '';
      text += c.choices[0]?.delta.content ?? '';
    }
    expect(reasoning).toBe('Two and two make four.');
    expect(text).toBe('Four.');
    expect(lastRequest().path).toBe(conversePath(GPT_OSS, true));
  });
});

describe('the Responses API on a Bedrock key through Converse', () => {
  it('answers whole and streamed, billed exactly', async () => {
    const level = nextLevel();
    const up = await bedrockKey(level);
    f.mock.behave(up, { usage, text: 'Hello from Nova.' });
    const user = await f.account({ level });
    const client = f.openai(user.key);
    const whole = await client.responses.create({ model: NOVA, input: 'Hi', instructions: 'Be kind.', max_output_tokens: 100, store: false });
    expect(whole.output_text).toBe('Hello from Nova.');
    expect(whole.usage).toMatchObject({ input_tokens: 200, output_tokens: 40, input_tokens_details: { cached_tokens: 120 } });
    expect(lastRequest().path).toBe(conversePath(NOVA_PROFILE, false));
    expect(lastBody()).toMatchObject({ system: [{ text: 'Be kind.' }], inferenceConfig: { maxTokens: 100 } });
    const s = await client.responses.create({ model: NOVA, input: 'Hi', store: false, stream: true });
    let text = '';
    let completed: any;
    for await (const ev of s) {
      if (ev.type === 'response.output_text.delta') text += ev.delta;
      if (ev.type === 'response.completed') completed = ev.response;
    }
    expect(text).toBe('Hello from Nova.');
    expect(completed.usage).toMatchObject({ input_tokens: 200, output_tokens: 40 });
    expect(lastRequest().path).toBe(conversePath(NOVA_PROFILE, true));
    await expectBilled(user.id, 2, NOVA);
  });

  it('continues a response the gateway keeps (previous_response_id): the kept turns go to Converse', async () => {
    const level = nextLevel();
    const up = await bedrockKey(level);
    f.mock.behave(up, { text: 'Noted.' });
    const user = await f.account({ level });
    const client = f.openai(user.key);
    const first = await client.responses.create({ model: NOVA, input: 'My name is Ada.' });
    const second = await client.responses.create({ model: NOVA, input: 'What is my name?', previous_response_id: first.id });
    expect(second.output_text).toBe('Noted.');
    expect(lastBody().messages).toEqual([
      { role: 'user', content: [{ text: 'My name is Ada.' }] },
      { role: 'assistant', content: [{ text: 'Noted.' }] },
      { role: 'user', content: [{ text: 'What is my name?' }] },
    ]);
  });
});

describe('@anthropic-ai/sdk on a Bedrock key through Converse', () => {
  it('runs tool use whole and streamed, cache reads and writes billed at their prices', async () => {
    const level = nextLevel();
    const up = await bedrockKey(level);
    f.mock.behave(up, { usage, toolCall: { name: 'get_weather', arguments: { city: 'Oslo' } }, text: 'Cold.' });
    const user = await f.account({ level });
    const client = f.anthropic(user.key);
    const tools = [{ name: 'get_weather', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } } } }];
    const ask = { role: 'user' as const, content: 'Weather in Oslo?' };
    for (const streamed of [false, true]) {
      const params = { model: NOVA, max_tokens: 200, system: 'Answer briefly.', tools, messages: [ask] };
      const msg = streamed ? await client.messages.stream(params).finalMessage() : await client.messages.create(params);
      expect(msg.stop_reason).toBe('tool_use');
      expect(msg.usage).toMatchObject({ input_tokens: 50, cache_read_input_tokens: 120, cache_creation_input_tokens: 30, output_tokens: 40 });
      const use = msg.content.find((b) => b.type === 'tool_use')!;
      expect(use).toMatchObject({ name: 'get_weather', input: { city: 'Oslo' } });
      expect(lastRequest().path).toBe(conversePath(NOVA_PROFILE, streamed));
      expect(lastBody()).toMatchObject({ system: [{ text: 'Answer briefly.' }], inferenceConfig: { maxTokens: 200 }, toolConfig: { tools: [{ toolSpec: { name: 'get_weather' } }] } });
      const next = await client.messages.create({
        model: NOVA, max_tokens: 200, tools,
        messages: [ask, { role: 'assistant', content: msg.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: (use as { id: string }).id, content: '-3°C' }] }],
      });
      expect(next.content).toEqual([{ type: 'text', text: 'Cold.' }]);
      expect(next.stop_reason).toBe('end_turn');
    }
    await expectBilled(user.id, 4, NOVA);
  });

  it('ends a stream with an error when Bedrock sends an exception mid-stream, and when the stream is cut', async () => {
    const level = nextLevel();
    const up = await bedrockKey(level);
    const user = await f.account({ level });
    for (const b of [{ streamError: { afterChunks: 1, data: null } }, { cutAfterChunks: 1 }]) {
      f.mock.behave(up, { text: 'A long answer in pieces.', chunks: 4, ...b });
      const { error } = await drain(f.anthropic(user.key).messages.stream({ model: NOVA, max_tokens: 50, messages: [{ role: 'user', content: 'Hi' }] }));
      expect(error).toBeDefined();
      expect(String(error?.message ?? error)).not.toContain('127.0.0.1');
    }
  });
});

describe('@google/genai on a Bedrock key through Converse', () => {
  it('answers generateContent whole and streamed with a function call, billed exactly', async () => {
    const level = nextLevel();
    const up = await bedrockKey(level);
    f.mock.behave(up, { usage, toolCall: { name: 'get_weather', arguments: { city: 'Rome' } }, text: 'Warm.' });
    const user = await f.account({ level });
    const ai = new GoogleGenAI({ apiKey: user.key, httpOptions: { baseUrl: f.gw.url } });
    const ask: Content = { role: 'user', parts: [{ text: 'Weather in Rome?' }] };
    const config = { tools: [{ functionDeclarations: [{ name: 'get_weather', parameters: { type: Type.OBJECT, properties: { city: { type: Type.STRING } } } }] }], maxOutputTokens: 300, temperature: 0.2 };
    const whole = await ai.models.generateContent({ model: NOVA, contents: [ask], config });
    const call = whole.functionCalls![0];
    expect(call).toMatchObject({ name: 'get_weather', args: { city: 'Rome' } });
    expect(whole.usageMetadata).toMatchObject({ promptTokenCount: 200, candidatesTokenCount: 40, cachedContentTokenCount: 120 });
    expect(lastRequest().path).toBe(conversePath(NOVA_PROFILE, false));
    expect(lastBody()).toMatchObject({ inferenceConfig: { maxTokens: 300, temperature: 0.2 }, toolConfig: { tools: [{ toolSpec: { name: 'get_weather' } }] } });
    let text = '';
    for await (const c of await ai.models.generateContentStream({
      model: NOVA, config,
      contents: [ask, { role: 'model', parts: [{ functionCall: call }] }, { role: 'user', parts: [{ functionResponse: { id: call.id, name: 'get_weather', response: { output: '30°C' } } }] }],
    })) text += c.text ?? '';
    expect(text).toBe('Warm.');
    expect(lastRequest().path).toBe(conversePath(NOVA_PROFILE, true));
    expect(lastBody().messages.at(-1)).toEqual({ role: 'user', content: [{ toolResult: { toolUseId: call.id, content: [{ text: '30°C' }] } }] });
    await expectBilled(user.id, 2, NOVA);
  });

  it('streams as one JSON array without alt=sse, ending with MAX_TOKENS when Bedrock cut the answer', async () => {
    const level = nextLevel();
    const up = await bedrockKey(level);
    f.mock.behave(up, { text: 'one two three four five six' });
    const user = await f.account({ level });
    const r = await fetch(`${f.gw.url}/v1beta/models/${NOVA}:streamGenerateContent`, {
      method: 'POST', headers: { 'x-goog-api-key': user.key, 'content-type': 'application/json' },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'Count' }] }], generationConfig: { maxOutputTokens: 2 } }),
    });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    const chunks = JSON.parse(await r.text()) as any[];
    expect(chunks.map((c) => c.candidates[0].content.parts.map((p: any) => p.text ?? '').join('')).join('')).toBe('one two ');
    expect(chunks.map((c) => c.candidates[0].finishReason).filter(Boolean)).toEqual(['MAX_TOKENS']);
    expect(lastRequest().path).toBe(conversePath(NOVA_PROFILE, true));
  });
});
