/**
 * A body that is not in its format's shape, on a key that needs it translated: refused with
 * 400 in the client's own error shape (Anthropic's on /v1/messages, OpenAI's envelope on the
 * OpenAI routes), naming where it is wrong, before any provider is called and without a bill;
 * never a 500. An upstream stream the translation cannot read ends in the client's error event.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { drain, secret, startProxyFixture, type ProxyFixture } from '../test-fixture';

let f: ProxyFixture;
beforeAll(async () => {
  f = await startProxyFixture();
  await f.config({ UNPRICED_MODEL_POLICY: 'bill:1,1' });
});
afterAll(async () => { await f?.close(); });

type KeyKind = 'standard' | 'chat-only' | 'anthropic';
const CONFIG: Record<KeyKind, Record<string, unknown> | undefined> = {
  standard: undefined,
  'chat-only': { provider_type: 'standard', responses: false },
  anthropic: { provider_type: 'anthropic' },
};

let levelSerial = 760;
async function userOn(kind: KeyKind) {
  const up = secret(`malformed-${kind}`);
  const level = ++levelSerial;
  await f.addKey(level, up, { config: CONFIG[kind] });
  return { up, user: await f.account({ level }) };
}

async function post(key: string, path: string, body: unknown) {
  const headers: Record<string, string> = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  if (path === '/v1/messages') headers['anthropic-version'] = '2023-06-01';
  const r = await fetch(`${f.gw.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  return { status: r.status, body: await r.json() as Record<string, any> };
}

/** Refused as the client's format refuses: nothing sent upstream, nothing billed. */
async function expectRefused(kind: KeyKind, path: string, body: Record<string, unknown>, message: string) {
  const { user } = await userOn(kind);
  const sent = f.mock.requests.length;
  const r = await post(user.key, path, body);
  expect(r.status).toBe(400);
  if (path === '/v1/messages') {
    expect(r.body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message, code: 'invalid_request' } });
  } else {
    expect(Object.keys(r.body)).toEqual(['error']);
    expect(r.body.error).toMatchObject({ type: 'invalid_request_error', message, code: 'invalid_request' });
  }
  expect(f.mock.requests.length).toBe(sent);
  expect(await f.usage(user.id)).toEqual([]);
}

describe('a malformed body on a translated path', () => {
  it('an Anthropic client with "messages": [null] on an OpenAI-format key gets 400 in Anthropic\'s shape', async () => {
    const body = { model: 'claude-test-1', max_tokens: 64, messages: [null] };
    await expectRefused('standard', '/v1/messages', body, 'messages.0: expected an object, got null');
    await expectRefused('chat-only', '/v1/messages', { ...body, stream: true }, 'messages.0: expected an object, got null');
  });

  it('the real @anthropic-ai/sdk raises its BadRequestError with the path in the message', async () => {
    const { user } = await userOn('standard');
    const client = f.anthropic(user.key);
    const err: any = await client.messages.create({
      model: 'claude-test-1', max_tokens: 64,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }, null] }] as any,
    }).catch((e) => e);
    expect(err.constructor.name).toBe('BadRequestError');
    expect(err.error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: 'messages.0.content.1: expected an object, got null' } });
  });

  it('an OpenAI client with "messages": [null] on an Anthropic key gets 400 in OpenAI\'s envelope', async () => {
    await expectRefused('anthropic', '/v1/chat/completions', { model: 'claude-test-1', messages: [null] }, 'messages.0: expected an object, got null');
    const { user } = await userOn('anthropic');
    const err: any = await f.openai(user.key).chat.completions.create({
      model: 'claude-test-1', messages: [{ role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { arguments: '{}' } }] }] as any,
    }).catch((e) => e);
    expect(err.status).toBe(400);
    expect(err.error).toMatchObject({ code: 'invalid_request', message: 'messages.0.tool_calls.0.function.name: required (a string)' });
  });

  it('a Responses client with "input": [null] gets 400 in OpenAI\'s envelope on a chat-only key and on an Anthropic key', async () => {
    const body = { model: 'gpt-test-1', input: [null] };
    await expectRefused('chat-only', '/v1/responses', body, 'input.0: expected an object, got null');
    await expectRefused('anthropic', '/v1/responses', body, 'input.0: expected an object, got null');
    await expectRefused('anthropic', '/v1/responses', { model: 'gpt-test-1', input: [{ type: 'function_call', call_id: 'c1', arguments: '{}' }] }, 'input.0.name: required (a string)');
  });

  it('tools that are not objects, or without a name, are refused the same way', async () => {
    await expectRefused('standard', '/v1/messages', { model: 'claude-test-1', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }], tools: [null] }, 'tools.0: expected an object, got null');
    await expectRefused('anthropic', '/v1/chat/completions', { model: 'claude-test-1', messages: [{ role: 'user', content: 'hi' }], tools: [{ type: 'function', function: {} }] }, 'tools.0.function.name: required (a string)');
    await expectRefused('chat-only', '/v1/responses', { model: 'gpt-test-1', input: 'hi', tools: [{ type: 'function' }] }, 'tools.0.name: required (a string)');
  });

  it('a same-format call is not judged by the gateway: its bytes go to the provider, whose own 400 reaches the client', async () => {
    const a = await userOn('anthropic');
    let sent = f.mock.requests.length;
    const r = await post(a.user.key, '/v1/messages', { model: 'claude-test-1', max_tokens: 64, messages: [null] });
    expect(f.mock.requests.length).toBe(sent + 1);
    expect(r).toMatchObject({ status: 400, body: { type: 'error', error: { type: 'invalid_request_error', message: expect.stringMatching(/^messages\.0: Input should be a valid dictionary/) } } });
    const o = await userOn('standard');
    sent = f.mock.requests.length;
    const c = await post(o.user.key, '/v1/chat/completions', { model: 'gpt-test-1', messages: [null] });
    expect(f.mock.requests.length).toBe(sent + 1);
    expect(c).toMatchObject({ status: 400, body: { error: { code: 'invalid_type', type: 'invalid_request_error' } } });
  });
});

describe('an upstream stream the translation cannot read', () => {
  it('ends in the client\'s own error event, never a crash', async () => {
    const { up, user } = await userOn('standard');
    // A tool call that is not an object, in a chunk of an otherwise well-formed stream.
    f.mock.behave(up, { chunks: 3, streamError: { afterChunks: 1, data: { id: 'x', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { tool_calls: [null] }, finish_reason: null }] } } });
    const stream = await f.anthropic(user.key).messages.create({ model: 'claude-test-1', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }], stream: true });
    const { items, error } = await drain(stream);
    expect(items.map((e) => e.type)).toContain('message_start');
    expect(error?.constructor.name).toBe('APIError');
    expect(error.error).toMatchObject({ type: 'error', error: { type: 'api_error', message: 'The upstream answer could not be read' } });
  });
});
