/**
 * AWS Bedrock keys (`provider_type: "bedrock"`): the real @anthropic-ai/sdk and openai SDKs on
 * Claude through InvokeModel, signed with SigV4 or with a Bedrock API key, whole and streamed
 * (AWS event-stream framing), billed once and exactly; throttling fails over, refused
 * credentials disable the key, and nothing of AWS's credentials or host reaches the client.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { drain, secret, startProxyFixture, nextLevel, type ProxyFixture } from '../test-fixture';
import { countedInputTokens } from '../../testing/mock-upstream/anthropic';

let f: ProxyFixture;
const PRICE = { InputText: 1, CachedText: 0.1, CacheWrite: 1.25, OutputText: 5, ReasonText: 7 };
const CLAUDE = 'claude-bedrock-test';
const PROFILE = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0';
const usage = { prompt_tokens: 120, completion_tokens: 30 };
const bill = (input: number, output: number) => (input * PRICE.InputText + output * PRICE.OutputText) / 1e6;
let serial = 0;
const accessKeyId = () => `AKIAMOCK${String(++serial).padStart(12, '0')}`;

beforeAll(async () => {
  f = await startProxyFixture();
  await f.config({ PRICING: JSON.stringify({ ChatPricing: { [CLAUDE]: PRICE } }) });
});
afterAll(async () => { await f?.close(); });

/** A SigV4 key (trusted by the mock unless `trusted` is false) or an API key, on `level`. */
async function bedrockKey(level: number, opts: { sigv4?: boolean; trusted?: boolean; label?: string; sessionToken?: string } = {}) {
  const up = secret(opts.label ?? 'bedrock');
  const config: Record<string, unknown> = { provider_type: 'bedrock', region: 'us-east-1', models: { [CLAUDE]: PROFILE } };
  const id = accessKeyId();
  if (opts.sigv4) {
    config.access_key_id = id;
    if (opts.trusted !== false) f.mock.trustAwsKey(id, up);
    if (opts.sessionToken) config.session_token = opts.sessionToken;
  }
  const keyId = await f.addKey(level, up, { config });
  return { up, keyId, accessKeyId: id };
}

const lastRequest = () => f.mock.requests.at(-1)!;
const invokePath = (stream: boolean) => `/model/${encodeURIComponent(PROFILE)}/${stream ? 'invoke-with-response-stream' : 'invoke'}`;

describe('@anthropic-ai/sdk on a Bedrock key', () => {
  for (const sigv4 of [true, false]) {
    it(`answers whole and streamed through InvokeModel (${sigv4 ? 'SigV4' : 'API key'}), billed exactly`, async () => {
      const level = nextLevel();
      const { up } = await bedrockKey(level, { sigv4 });
      f.mock.behave(up, { usage, text: 'Hello from Bedrock.' });
      const user = await f.account({ level });
      const client = f.anthropic(user.key);
      const params = { model: CLAUDE, max_tokens: 100, messages: [{ role: 'user' as const, content: 'Hi' }] };
      const whole = await client.messages.create(params, { headers: { 'anthropic-beta': 'context-1m-2025-08-07' } });
      expect(whole.content).toEqual([{ type: 'text', text: 'Hello from Bedrock.' }]);
      let rec = lastRequest();
      expect(rec.path).toBe(invokePath(false));
      expect(rec.credential).toBe(up);
      if (sigv4) expect(rec.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIAMOCK/);
      else expect(rec.headers.authorization).toBe(`Bearer ${up}`);
      expect(rec.body).toMatchObject({ anthropic_version: 'bedrock-2023-05-31', anthropic_beta: ['context-1m-2025-08-07'], max_tokens: 100 });
      expect(rec.body).not.toHaveProperty('model');
      expect(rec.body).not.toHaveProperty('stream');

      const stream = client.messages.stream(params);
      const texts: string[] = [];
      stream.on('text', (t) => texts.push(t));
      const final = await stream.finalMessage();
      expect(texts.join('')).toBe('Hello from Bedrock.');
      expect(final.usage).toMatchObject({ input_tokens: 120, output_tokens: 30 });
      rec = lastRequest();
      expect(rec.path).toBe(invokePath(true));
      expect(rec.body).not.toHaveProperty('stream');

      const rows = await f.usage(user.id);
      expect(rows).toHaveLength(2);
      for (const r of rows) {
        expect(r).toMatchObject({ model: CLAUDE, prompt: 120, completion: 30, endpoint: '/v1/messages' });
        expect(r.credit_used).toBeCloseTo(bill(120, 30), 12);
      }
    });
  }

  it('counts tokens through Bedrock\'s CountTokens (the foundation model, the invoke body in base64)', async () => {
    const level = nextLevel();
    await bedrockKey(level, { sigv4: true });
    const user = await f.account({ level });
    const body = { model: CLAUDE, messages: [{ role: 'user' as const, content: 'How many tokens is this sentence?' }] };
    const counted = await f.anthropic(user.key).messages.countTokens(body);
    const rec = f.mock.requests.find((r) => r.path.endsWith('/count-tokens'))!;
    expect(rec.path).toBe(`/model/${encodeURIComponent(PROFILE.slice(3))}/count-tokens`);
    const sent = JSON.parse(Buffer.from((rec.body as any).input.invokeModel.body, 'base64').toString('utf8'));
    expect(sent).toMatchObject({ anthropic_version: 'bedrock-2023-05-31', messages: body.messages });
    expect(counted.input_tokens).toBe(countedInputTokens(sent));
    expect(await f.usage(user.id)).toHaveLength(0);
  });

  it('ends a stream with an error when Bedrock sends an exception mid-stream', async () => {
    const level = nextLevel();
    const { up } = await bedrockKey(level, { sigv4: true });
    f.mock.behave(up, { usage, streamError: { afterChunks: 1, event: 'error', data: { type: 'error', error: { type: 'api_error', message: 'model stream failed' } } } });
    const user = await f.account({ level });
    const stream = f.anthropic(user.key).messages.stream({ model: CLAUDE, max_tokens: 50, messages: [{ role: 'user', content: 'Hi' }] });
    const { error } = await drain(stream);
    expect(error).toBeDefined();
    expect(String(error?.message ?? error)).toMatch(/modelStreamErrorException/);
  });

  it('relays a ValidationException as a 400 in Anthropic\'s shape', async () => {
    const level = nextLevel();
    const { up } = await bedrockKey(level);
    f.mock.behave(up, { status: 400, times: 1 });
    const user = await f.account({ level });
    const r = await f.gw.as(user.key).post('/v1/messages', { model: CLAUDE, max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringContaining('ValidationException') } });
    expect(r.headers.get('x-amzn-errortype')).toBeNull();
  });
});

describe('temporary credentials', () => {
  it('signs the session token, which the key\'s view never shows', async () => {
    const level = nextLevel();
    const token = 'IQoJb3JpZ2luX2VjEMockSessionToken0123456789abcdefghijklmnop';
    const { keyId } = await bedrockKey(level, { sigv4: true, sessionToken: token });
    const user = await f.account({ level });
    await f.anthropic(user.key).messages.create({ model: CLAUDE, max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] });
    const rec = lastRequest();
    expect(rec.headers['x-amz-security-token']).toBe(token);
    expect(rec.headers.authorization).toMatch(/SignedHeaders=[^,]*x-amz-security-token/);
    const keys = await f.gw.root.get(`/x-keys?level=${level}`);
    const view = keys.body.find((k: { ID: number }) => k.ID === keyId);
    expect(view.config).toMatchObject({ provider_type: 'bedrock', session_token_set: true });
    expect(JSON.stringify(keys.body)).not.toContain(token);
  });
});

describe('the openai SDK on a Bedrock key', () => {
  it('runs a tool loop whole and streamed, translated to InvokeModel, billed exactly', async () => {
    const level = nextLevel();
    const { up } = await bedrockKey(level, { sigv4: true });
    f.mock.behave(up, { usage, toolCall: { name: 'get_weather', arguments: { city: 'Paris' } }, text: 'It is 18°C.' });
    const user = await f.account({ level });
    const client = f.openai(user.key);
    const tools = [{ type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
    const ask = { role: 'user' as const, content: 'Weather in Paris?' };
    for (const streamed of [false, true]) {
      let call: { id: string; name: string; args: string };
      if (streamed) {
        const s = await client.chat.completions.create({ model: CLAUDE, messages: [ask], tools, stream: true, stream_options: { include_usage: true } });
        const acc = { id: '', name: '', args: '' };
        let finish: string | null = null;
        for await (const c of s) {
          const tc = c.choices[0]?.delta.tool_calls?.[0];
          if (tc?.id) acc.id = tc.id;
          if (tc?.function?.name) acc.name = tc.function.name;
          if (tc?.function?.arguments) acc.args += tc.function.arguments;
          finish = c.choices[0]?.finish_reason ?? finish;
        }
        expect(finish).toBe('tool_calls');
        call = acc;
      } else {
        const r = await client.chat.completions.create({ model: CLAUDE, messages: [ask], tools });
        expect(r.choices[0].finish_reason).toBe('tool_calls');
        const tc = r.choices[0].message.tool_calls![0] as { id: string; function: { name: string; arguments: string } };
        call = { id: tc.id, name: tc.function.name, args: tc.function.arguments };
        expect(r.usage).toMatchObject({ prompt_tokens: 120, completion_tokens: 30 });
      }
      expect(call.name).toBe('get_weather');
      expect(JSON.parse(call.args)).toEqual({ city: 'Paris' });
      expect(lastRequest().path).toBe(invokePath(streamed));
      const next = await client.chat.completions.create({
        model: CLAUDE, tools,
        messages: [ask, { role: 'assistant', content: null, tool_calls: [{ id: call.id, type: 'function', function: { name: call.name, arguments: call.args } }] }, { role: 'tool', tool_call_id: call.id, content: '18°C' }],
      });
      expect(next.choices[0].message.content).toBe('It is 18°C.');
      expect((lastRequest().body as any).messages.at(-1).content[0]).toMatchObject({ type: 'tool_result', tool_use_id: call.id });
    }
    const rows = await f.usage(user.id);
    expect(rows).toHaveLength(4);
    for (const r of rows) expect(r.credit_used).toBeCloseTo(bill(120, 30), 12);
  });

  it('streams text translated from the event stream, with usage', async () => {
    const level = nextLevel();
    const { up } = await bedrockKey(level);
    f.mock.behave(up, { usage, text: 'Streaming from Bedrock.' });
    const user = await f.account({ level });
    const s = await f.openai(user.key).chat.completions.create({ model: CLAUDE, messages: [{ role: 'user', content: 'Hi' }], stream: true, stream_options: { include_usage: true } });
    let text = '';
    let got: unknown;
    for await (const c of s) {
      text += c.choices[0]?.delta.content ?? '';
      if (c.usage) got = c.usage;
    }
    expect(text).toBe('Streaming from Bedrock.');
    expect(got).toMatchObject({ prompt_tokens: 120, completion_tokens: 30 });
    const rows = await f.usage(user.id);
    expect(rows).toHaveLength(1);
    expect(rows[0].credit_used).toBeCloseTo(bill(120, 30), 12);
  });

  it('ends a translated stream with an OpenAI-format error when Bedrock throttles mid-stream', async () => {
    const level = nextLevel();
    const { up } = await bedrockKey(level);
    f.mock.behave(up, { usage, streamError: { afterChunks: 1, event: 'error', data: { type: 'error', error: { type: 'api_error', message: 'model stream failed' } } } });
    const user = await f.account({ level });
    const s = await f.openai(user.key).chat.completions.create({ model: CLAUDE, messages: [{ role: 'user', content: 'Hi' }], stream: true });
    const { items, error } = await drain(s);
    expect(items.length).toBeGreaterThan(0);
    expect(error).toBeDefined();
    expect(String(error.message)).toMatch(/modelStreamErrorException/);
    expect(String(error.message)).not.toContain('127.0.0.1');
  });
});

describe('Bedrock key health', () => {
  it('puts a throttled key to sleep and serves the call from the next one', async () => {
    const level = nextLevel();
    const first = await bedrockKey(level, { sigv4: true, label: 'throttled' });
    const second = await bedrockKey(level, { sigv4: true, label: 'spare' });
    f.mock.behave(first.up, { status: 429 });
    f.mock.behave(second.up, { usage, text: 'Served by the spare.' });
    const user = await f.account({ level });
    for (let i = 0; i < 2; i++) {
      const r = await f.anthropic(user.key).messages.create({ model: CLAUDE, max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] });
      expect(r.content).toEqual([{ type: 'text', text: 'Served by the spare.' }]);
    }
    const keys = (await f.gw.root.get('/x-keys')).body;
    const list = (Array.isArray(keys) ? keys : keys.Keys ?? keys.Data ?? []) as { ID: number; Sleeping: boolean }[];
    expect(list.find((k) => k.ID === first.keyId)?.Sleeping).toBe(true);
    expect(await f.usage(user.id)).toHaveLength(2);
  });

  for (const client of ['anthropic', 'openai'] as const) {
    it(`disables a key whose signature AWS refuses; the ${client} client gets its own error without secret or host`, async () => {
      const level = nextLevel();
      // Known to the mock under another secret: InvalidSignatureException, with AWS's canonical string in the message.
      const bad = await bedrockKey(level, { sigv4: true, trusted: false, label: `badsig-${client}` });
      f.mock.trustAwsKey(bad.accessKeyId, 'another-secret-entirely-0000000000000');
      const unknown = await bedrockKey(level, { sigv4: true, trusted: false, label: `unknown-${client}` });
      const user = await f.account({ level });
      const r = client === 'anthropic'
        ? await f.gw.as(user.key).post('/v1/messages', { model: CLAUDE, max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] })
        : await f.gw.as(user.key).post('/v1/chat/completions', { model: CLAUDE, messages: [{ role: 'user', content: 'Hi' }] });
      expect(r.status).toBeGreaterThanOrEqual(400);
      if (client === 'anthropic') expect(r.body).toMatchObject({ type: 'error', error: { message: expect.any(String) } });
      else expect(r.body).toMatchObject({ error: { message: expect.any(String) } });
      const text = r.text;
      for (const s of [bad.up, unknown.up, '127.0.0.1', 'Canonical', 'AWS4-HMAC-SHA256', 'AKIAMOCK']) expect(text).not.toContain(s);
      await f.gw.gateway.proxy.health.settle();
      const disabled = (await f.gw.root.get('/x-conf')).body.DisabledKeys as { ID: number; Reason: string }[];
      const reasons = [bad.keyId, unknown.keyId].map((id) => disabled.find((k) => k.ID === id)?.Reason ?? '');
      expect(reasons[0]).toMatch(/InvalidSignatureException/);
      expect(reasons[1]).toMatch(/UnrecognizedClientException/);
      for (const reason of reasons) for (const s of [bad.up, unknown.up, '127.0.0.1', 'Canonical']) expect(reason).not.toContain(s);
      expect(await f.usage(user.id)).toHaveLength(0);
    });
  }
});
