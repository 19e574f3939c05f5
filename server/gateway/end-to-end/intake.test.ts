import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import net from 'node:net';
import { expectEnvelope, type HttpResult } from '../../testing/http';
import type { TestAccount } from '../../testing/accounts';
import { hello, secret, sleep, startProxyFixture, type ProxyFixture } from '../test-fixture';

let f: ProxyFixture;
let user: TestAccount;
beforeAll(async () => {
  // The default 30 s grace: a call wrongly counted as under way would hold close() that long.
  f = await startProxyFixture({ shutdownGraceMs: 30_000 });
  await f.addKey(1, secret('intake'));
  // Invented model names are served (billed at a fallback): the price policy has tests of its own.
  await f.config({ UNPRICED_MODEL_POLICY: 'bill:1,1' });
  user = await f.account({ level: 1 });
});
afterAll(async () => { await f?.close(); });

/** Anthropic's error shape (plus our code), as /v1/messages answers the gateway's own refusals. */
function expectAnthropicError(r: HttpResult, status: number): { type: string; message: string; code: string } {
  expect(r.status, r.text).toBe(status);
  expect(r.body).toMatchObject({ type: 'error', error: { type: expect.any(String), message: expect.any(String), code: expect.any(String) } });
  return r.body.error;
}

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  f.gw.as(user.key).request('POST', path, { raw: typeof body === 'string' ? body : JSON.stringify(body), headers: { 'content-type': 'application/json', ...headers } });

describe("the proxy's input checks", () => {
  it('refuses a body that is not application/json with 415, in each route format', async () => {
    const before = f.mock.requests.length;
    const body = JSON.stringify({ model: 'gpt-4o', messages: hello });
    expect(expectEnvelope(await post('/v1/chat/completions', body, { 'content-type': 'text/plain' }), 415).code).toBeTruthy();
    expect(expectEnvelope(await post('/embeddings', body, { 'content-type': 'application/xml' }), 415).code).toBeTruthy();
    expectAnthropicError(await post('/v1/messages', body, { 'content-type': 'text/plain' }), 415);
    // JSON with parameters is JSON.
    expect((await post('/v1/chat/completions', body, { 'content-type': 'application/json; charset=utf-8' })).status).toBe(200);
    expect(f.mock.requests.length - before).toBe(1);
  });

  it('refuses stream fields of the wrong type, naming the field, and forwards nothing', async () => {
    const before = f.mock.requests.length;
    const chat = (extra: Record<string, unknown>) => post('/v1/chat/completions', { model: 'gpt-4o', messages: hello, ...extra });
    expect(expectEnvelope(await chat({ stream: 'true' }), 400)).toMatchObject({ message: 'stream: must be a boolean', code: 'invalid_request' });
    expect(expectEnvelope(await chat({ stream: 1 }), 400).message).toBe('stream: must be a boolean');
    expect(expectEnvelope(await chat({ stream: true, stream_options: 'yes' }), 400).message).toBe('stream_options: must be an object');
    expect(expectEnvelope(await chat({ stream: true, stream_options: { include_usage: 'true' } }), 400).message).toBe('stream_options.include_usage: must be a boolean');
    expect(expectEnvelope(await post('/v1/responses', { model: 'o4-mini', input: 'hi', stream: 'false' }), 400).message).toBe('stream: must be a boolean');
    expect(expectAnthropicError(await post('/v1/messages', { model: 'claude-haiku-4-5', max_tokens: 5, messages: hello, stream: 'true' }), 400)).toMatchObject({ type: 'invalid_request_error', message: 'stream: must be a boolean' });
    expect(f.mock.requests.length - before).toBe(0);
    // null is absent, as OpenAI has it
    expect((await chat({ stream: null, stream_options: null })).status).toBe(200);
  });

  it('refuses model names that are not model names before mapping, forwarding or billing them', async () => {
    const before = f.mock.requests.length;
    const billed = (await f.usage(user.id)).length;
    for (const model of ['../../etc/passwd', 'gpt-4o/../../admin', 'gpt\u0000x', 'gpt\r\nX-Injected: 1', 'a'.repeat(201), '', '/v1/chat/completions']) {
      const e = expectEnvelope(await post('/v1/chat/completions', { model, messages: hello }), 400);
      expect(e.code, JSON.stringify(model)).toBe('invalid_model');
      expect(e.message).toMatch(/^model: /);
    }
    expect(expectAnthropicError(await post('/v1/messages', { model: '../../etc/passwd', max_tokens: 5, messages: hello }), 400)).toMatchObject({ code: 'invalid_model', message: expect.stringContaining('path segment') });
    expect(f.mock.requests.length - before).toBe(0);
    expect(await f.usage(user.id)).toHaveLength(billed);
    // What providers call their models passes, and is billed under its name.
    const good = ['org/model-x', 'gpt-4o:ft-acme:2024', 'модель-1'];
    for (const model of good) expect((await post('/v1/chat/completions', { model, messages: hello })).status).toBe(200);
    expect((await f.usage(user.id)).map((r) => r.model).slice(billed)).toEqual(good);
  });
});

describe('a client that leaves half-way through its body', () => {
  it('is not counted as under way, and shutdown (the SIGTERM path) finishes at once', async () => {
    const { port } = new URL(f.gw.url);
    const body = JSON.stringify({ model: 'gpt-4o', messages: hello });
    for (const framing of [`Content-Length: ${body.length}\r\n\r\n${body.slice(0, 20)}`, `Transfer-Encoding: chunked\r\n\r\n${body.length.toString(16)}\r\n${body.slice(0, 20)}`]) {
      await new Promise<void>((resolve) => {
        const s = net.connect(Number(port), '127.0.0.1', () => {
          s.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${user.key}\r\nContent-Type: application/json\r\n${framing}`);
          setTimeout(() => { s.destroy(); resolve(); }, 100);
        });
      });
    }
    await sleep(200);
    expect(f.gw.gateway.proxy.inFlight).toBe(0);
    const t0 = Date.now();
    await f.gw.gateway.proxy.close();
    expect(Date.now() - t0).toBeLessThan(1000);
  });
});
