import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { estimateTokens } from '../../testing/mock-upstream';
import { expectEnvelope } from '../../testing/http';
import { drain, hello, secret, startProxyFixture, type ProxyFixture } from '../test-fixture';

let f: ProxyFixture;
beforeAll(async () => { f = await startProxyFixture({ maxBodyBytes: 64 * 1024 }); });
afterAll(async () => { await f?.close(); });

const usageOf = (p: number, c: number, extra: { reasoning_tokens?: number; cached_tokens?: number } = {}) => ({ prompt_tokens: p, completion_tokens: c, ...extra });

describe('OpenAI-format endpoints with the openai SDK', () => {
  it('answers chat completions whole, forwarding the body unchanged with the provider key', async () => {
    const up = secret('chat');
    await f.addKey(1, up);
    const user = await f.account({ level: 1 });
    const r = await f.openai(user.key).chat.completions.create({ model: 'gpt-4o-mini', messages: hello });
    expect(r.choices[0].message.content).toBe('This is a mock answer from gpt-4o-mini.');
    const rec = f.mock.requests.at(-1)!;
    expect(rec).toMatchObject({ path: '/v1/chat/completions', credential: up });
    expect(rec.headers.authorization).toBe(`Bearer ${up}`);
    expect(rec.body).toEqual({ model: 'gpt-4o-mini', messages: hello });
    const [row] = await f.usage(user.id);
    const prompt = estimateTokens(hello[0].content);
    const completion = estimateTokens('This is a mock answer from gpt-4o-mini.');
    expect(row).toMatchObject({ model: 'gpt-4o-mini', level: 1, endpoint: '/v1/chat/completions', prompt, completion, status: 'ok' });
    expect(row.credit_used).toBeCloseTo((prompt * 0.15 + completion * 0.6) / 1e6, 12);
  });

  it('streams chunk by chunk, asking for usage itself and hiding the extra usage chunk', async () => {
    const up = secret('stream');
    await f.addKey(2, up);
    const user = await f.account({ level: 2 });
    f.mock.behave(up, { text: 'one two three four', chunks: 4, usage: usageOf(100, 40, { reasoning_tokens: 10, cached_tokens: 30 }) });
    const { items, error } = await drain(await f.openai(user.key).chat.completions.create({ model: 'gpt-4o', messages: hello, stream: true }));
    expect(error).toBeUndefined();
    expect(items.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('one two three four');
    expect(items.every((c) => c.choices.length === 1 && !c.usage)).toBe(true);
    expect((f.mock.requests.at(-1)!.body as any).stream_options).toEqual({ include_usage: true });
    const [row] = await f.usage(user.id);
    expect(row).toMatchObject({ prompt: 100, completion: 40, reasoning: 10, cached: 30, status: 'ok' });
    // 70 plain input at 2.5, 30 cached at 1.25, 40 output at 10 (gpt-4o per million tokens)
    expect(row.credit_used).toBeCloseTo((70 * 2.5 + 30 * 1.25 + 40 * 10) / 1e6, 12);
  });

  it('passes the usage chunk through when the client asked for it, and the body untouched', async () => {
    const up = secret('stream-usage');
    await f.addKey(3, up);
    const user = await f.account({ level: 3 });
    f.mock.behave(up, { usage: usageOf(12, 5) });
    const req = { model: 'gpt-4o', messages: hello, stream: true as const, stream_options: { include_usage: true } };
    const { items } = await drain(await f.openai(user.key).chat.completions.create(req));
    expect(items.at(-1)!.usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 5 });
    expect(f.mock.requests.at(-1)!.body).toEqual(req);
    expect((await f.usage(user.id))[0]).toMatchObject({ prompt: 12, completion: 5 });
  });

  it('serves the Responses API whole and streamed, and the alias without /v1', async () => {
    const up = secret('responses');
    await f.addKey(4, up);
    const user = await f.account({ level: 4 });
    f.mock.behave(up, { usage: usageOf(20, 8, { reasoning_tokens: 3 }), text: 'abc def' });
    const whole = await f.openai(user.key).responses.create({ model: 'o4-mini', input: 'hi' });
    expect(whole.output_text).toBe('abc def');
    const { items, error } = await drain(await f.openai(user.key).responses.create({ model: 'o4-mini', input: 'hi', stream: true }));
    expect(error).toBeUndefined();
    expect(items.at(-1)!.type).toBe('response.completed');
    const alias = await f.gw.as(user.key).post('/responses', { model: 'o4-mini', input: 'hi' });
    expect(alias.status).toBe(200);
    expect(f.mock.requests.at(-1)!.path).toBe('/v1/responses');
    const rows = await f.usage(user.id);
    expect(rows).toHaveLength(3);
    for (const r of rows) expect(r).toMatchObject({ endpoint: '/v1/responses', prompt: 20, completion: 8, reasoning: 3, status: 'ok' });
  });

  it('serves embeddings and bills their input tokens', async () => {
    const up = secret('embed');
    await f.addKey(5, up);
    const user = await f.account({ level: 5 });
    f.mock.behave(up, { usage: usageOf(1000, 0) });
    const r = await f.openai(user.key).embeddings.create({ model: 'text-embedding-3-small', input: ['a', 'b'] });
    expect(r.data).toHaveLength(2);
    expect(r.data[0].embedding.length).toBe(8);
    const [row] = await f.usage(user.id);
    expect(row).toMatchObject({ endpoint: '/v1/embeddings', prompt: 1000, completion: 0 });
    expect(row.credit_used).toBeCloseTo(1000 * 0.02 / 1e6, 12);
  });
});

describe('Anthropic format on /v1/messages with @anthropic-ai/sdk', () => {
  it('answers whole and streamed with x-api-key and anthropic-version, billing cache reads', async () => {
    const up = secret('anthropic');
    await f.addKey(6, up, { provider: `${f.mock.url}/`, config: { provider_type: 'anthropic' } });
    const user = await f.account({ level: 6 });
    f.mock.behave(up, { usage: usageOf(1000, 50, { cached_tokens: 800 }), text: 'Hi there' });
    const client = f.anthropic(user.key);
    const msg = await client.messages.create({ model: 'claude-haiku-4-5', max_tokens: 100, messages: hello });
    expect(msg.content[0]).toMatchObject({ type: 'text', text: 'Hi there' });
    const rec = f.mock.requests.at(-1)!;
    expect(rec.path).toBe('/v1/messages');
    expect(rec.headers['x-api-key']).toBe(up);
    // The client's own anthropic-version travels on.
    expect(rec.headers['anthropic-version']).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    const { items, error } = await drain(await client.messages.create({ model: 'claude-haiku-4-5', max_tokens: 100, messages: hello, stream: true }));
    expect(error).toBeUndefined();
    expect(items.map((e) => e.type)).toContain('message_stop');
    const rows = await f.usage(user.id);
    expect(rows).toHaveLength(2);
    // 200 plain input at 1, 800 cache reads at 0.1, 50 output at 5 (claude-haiku-4-5)
    for (const r of rows) {
      expect(r).toMatchObject({ endpoint: '/v1/messages', prompt: 1000, cached: 800, completion: 50, status: 'ok' });
      expect(r.credit_used).toBeCloseTo((200 * 1 + 800 * 0.1 + 50 * 5) / 1e6, 12);
    }
  });

  it('takes the key from x-api-key and answers errors in Anthropic format', async () => {
    const user = await f.account({ level: 6 });
    const body = { model: 'claude-haiku-4-5', max_tokens: 10, messages: hello };
    const ok = await f.gw.as(null).request('POST', '/messages', { body, headers: { 'x-api-key': user.key } });
    expect(ok.status).toBe(200);
    // A client that sends no anthropic-version gets the default one upstream.
    expect(f.mock.requests.at(-1)!.headers['anthropic-version']).toBe('2023-06-01');
    const bad = await f.gw.as(null).request('POST', '/v1/messages', { body, headers: { 'x-api-key': 'sk-Xvs-wrong' } });
    expect(bad.status).toBe(401);
    expect(bad.body).toMatchObject({ type: 'error', error: { type: 'authentication_error', code: 'invalid_api_key' } });
    const err = await f.anthropic('sk-Xvs-wrong').messages.create(body).catch((e) => e);
    expect(err.constructor.name).toBe('AuthenticationError');
  });
});

describe('client errors', () => {
  it('answers missing or invalid keys and bad bodies with the envelope, without calling upstream', async () => {
    const user = await f.account({ level: 1 });
    const before = f.mock.requests.length;
    expect(expectEnvelope(await f.gw.as(null).post('/v1/chat/completions', { model: 'x', messages: hello }), 401).code).toBe('missing_api_key');
    expect(expectEnvelope(await f.gw.as('sk-Xvs-nope').post('/chat/completions', { model: 'x', messages: hello }), 401).code).toBe('invalid_api_key');
    const c = f.gw.as(user.key);
    expect(expectEnvelope(await c.request('POST', '/v1/chat/completions', { raw: '{"model":', headers: { 'content-type': 'application/json' } }), 400).code).toBe('invalid_json');
    expect(expectEnvelope(await c.post('/v1/chat/completions', [1, 2]), 400).message).toMatch(/object/);
    expect(expectEnvelope(await c.post('/v1/chat/completions', { messages: hello }), 400).message).toMatch(/model/);
    expect(expectEnvelope(await c.post('/v1/embeddings', { model: 7, input: 'x' }), 400).message).toMatch(/model/);
    expect(expectEnvelope(await c.post('/v1/chat/completions', { model: 'gpt-4o', messages: [{ role: 'user', content: 'x'.repeat(70_000) }] }), 413).code).toBe('body_too_large');
    const sdkErr = await f.openai('sk-Xvs-nope').chat.completions.create({ model: 'x', messages: hello }).catch((e) => e);
    expect(sdkErr.status).toBe(401);
    expect(f.mock.requests.length).toBe(before);
    expect((await f.usage(user.id))).toHaveLength(0);
  });

  it('passes upstream 400, 404 and 422 back unchanged, never retried or billed', async () => {
    const a = secret('client-err-a');
    const b = secret('client-err-b');
    await f.addKey(7, a);
    await f.addKey(7, b);
    const user = await f.account({ level: 7 });
    for (const status of [400, 404, 422]) {
      f.mock.behave(a, { status });
      f.mock.behave(b, { status });
      const before = f.mock.requests.length;
      const r = await f.gw.as(user.key).post('/v1/chat/completions', { model: 'gpt-4o', messages: hello });
      expect(r.status).toBe(status);
      expect(r.body).toEqual({ error: { message: `mock upstream failure (${status})`, type: expect.any(String), param: null, code: expect.any(String) } });
      expect(f.mock.requests.length - before).toBe(1);
    }
    expect(await f.usage(user.id)).toHaveLength(0);
  });

  it('never shows provider SecretKeys or account keys in logs or answers', async () => {
    const up = secret('leak-check');
    await f.addKey(8, up);
    f.mock.behave(up, { status: 401 });
    const user = await f.account({ level: 8 });
    const r = await f.gw.as(user.key).post('/v1/chat/completions', { model: 'gpt-4o', messages: hello });
    expect(r.text).not.toContain(up);
    await f.gw.gateway.proxy.health.settle();
    const logs = f.gw.logs.join('\n');
    expect(logs).not.toContain(up);
    expect(logs).not.toContain(user.key);
  });
});
