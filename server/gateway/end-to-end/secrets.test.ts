import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { drain, hello, secret, startProxyFixture, type ProxyFixture } from '../test-fixture';

/**
 * An upstream that echoes the request's credentials and its own address in its error text:
 * nothing of it may reach the subaccount (relayed 4xx bodies, streamed error events), the
 * Owner's DisabledKeys, or the log.
 */

let f: ProxyFixture;
let host: string;
beforeAll(async () => {
  f = await startProxyFixture({ keyFailureThreshold: 1000 });
  host = new URL(f.mock.url).host;
});
afterAll(async () => { await f?.close(); });

/** Every form in which the upstream echoes the key, and where it lives. */
const leaks = (s: string) => [s, encodeURIComponent(s), Buffer.from(s).toString('base64'), f.mock.url, host];

function expectClean(text: string, s: string): void {
  for (const leak of leaks(s)) expect(text).not.toContain(leak);
}

describe('upstream error text', () => {
  it('a relayed 400 keeps its status and shape, without the SecretKey, the Provider URL or its host', async () => {
    const s = secret('echo-400');
    await f.addKey(61, s);
    f.mock.behave(s, { status: 400, echoCredentials: true });
    const user = await f.account({ level: 61 });
    for (let i = 0; i < 5; i++) {
      const r = await f.gw.as(user.key).post('/v1/chat/completions', { model: 'gpt-4o', messages: hello });
      expect(r.status).toBe(400);
      expectClean(r.text, s);
      // Still the upstream's own JSON error, with what was taken out named.
      expect(r.body.error.type).toBe('invalid_request_error');
      expect(r.body.error.message).toMatch(/^mock upstream failure \(400\): you sent Bearer \[key\] to \[url\] \(key=\[key\], base64 \[key\]\)$/);
      // The length the client is told is that of the scrubbed body.
      expect(Number(r.headers.get('content-length'))).toBe(Buffer.byteLength(r.text));
    }
    // The upstream did get the echo: the test would pass for nothing otherwise.
    expect(f.mock.requests.at(-1)!.credential).toBe(s);
  });

  it('a 400 on /v1/messages is scrubbed the same way, in the Anthropic error shape', async () => {
    const s = secret('echo-msg');
    await f.addKey(62, s);
    f.mock.behave(s, { status: 400, echoCredentials: true });
    const user = await f.account({ level: 62 });
    const r = await f.gw.as(user.key).request('POST', '/v1/messages', {
      body: { model: 'claude-sonnet-4-5', max_tokens: 20, messages: hello }, headers: { 'anthropic-version': '2023-06-01' },
    });
    expect(r.status).toBe(400);
    expectClean(r.text, s);
    expect(r.body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringMatching(/you sent (Bearer|x-api-key) \[key\] to \[url\]/) } });
  });

  it('a streamed error event echoing the secret reaches the client scrubbed; the other events pass as they came', async () => {
    const s = secret('echo-stream');
    await f.addKey(63, s);
    f.mock.behave(s, {
      chunks: 3,
      streamError: { afterChunks: 2, data: { error: { message: `Upstream failed for Bearer ${s} at ${f.mock.url}/v1/chat/completions (${host})`, type: 'server_error' } } },
    });
    const user = await f.account({ level: 63 });
    const res = await fetch(`${f.gw.url}/v1/chat/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${user.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o', messages: hello, stream: true }),
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    expectClean(text, s);
    const events = text.split('\n\n').filter(Boolean);
    expect(events).toHaveLength(3);
    expect(JSON.parse(events[0].slice(6)).choices[0].delta.content).toBeTypeOf('string');
    expect(JSON.parse(events[2].slice(6))).toEqual({ error: { message: 'Upstream failed for Bearer [key] at [url] ([upstream])', type: 'server_error' } });

    // The SDK raises the upstream's error event, scrubbed.
    const sdk = await drain(await f.openai(user.key).chat.completions.create({ model: 'gpt-4o', messages: hello, stream: true }));
    expect(sdk.items).toHaveLength(2);
    expect(String(sdk.error?.message)).toContain('Bearer [key] at [url]');
  });

  it('a 2xx answer passes untouched, even when the model repeats the secret', async () => {
    const s = secret('echo-ok');
    await f.addKey(64, s);
    f.mock.behave(s, { text: `you said ${s} at ${f.mock.url}` });
    const user = await f.account({ level: 64 });
    const r = await f.gw.as(user.key).post('/v1/chat/completions', { model: 'gpt-4o', messages: hello });
    expect(r.status).toBe(200);
    expect(r.body.choices[0].message.content).toBe(`you said ${s} at ${f.mock.url}`);
  });

  it('a 401 echoing the secret disables the key; DisabledKeys and the operation log show neither secret nor host', async () => {
    const s = secret('echo-401');
    const keyId = await f.addKey(65, s);
    f.mock.behave(s, { status: 401, echoCredentials: true });
    const user = await f.account({ level: 65 });
    const r = await f.gw.as(user.key).post('/v1/chat/completions', { model: 'gpt-4o', messages: hello });
    // The gateway's own answer: the upstream's text is not in it at all.
    expect(r.body.error.code).toBe('upstream_error');
    expectClean(r.text, s);
    await f.gw.gateway.proxy.health.settle();
    const conf = await f.gw.root.get('/x-conf');
    const reason: string = conf.body.DisabledKeys.find((k: { ID: number }) => k.ID === keyId).Reason;
    expect(reason).toMatch(/^upstream answered 401: .*you sent Bearer \[key\] to \[url\]/);
    expectClean(reason, s);
    const key = await f.gw.root.get(`/x-keys/${keyId}`);
    expectClean(JSON.stringify(key.body[0].DisabledReason), s);
    const ops = await f.gw.gateway.database.rows<{ details: unknown }>(sql`select details from operation_logs where action = 'auto_disable_key'`);
    const details = ops.map((o) => (typeof o.details === 'string' ? JSON.parse(o.details) : o.details)).find((d) => d.key === keyId);
    expect(details.reason).toBe(reason);
  });

  it('no log line holds a secret the upstream echoed, nor its host', async () => {
    const joined = f.gw.logs.join('\n');
    expect(joined).toContain('upstream answered 401');
    for (const label of ['echo-400', 'echo-msg', 'echo-stream', 'echo-401']) expect(joined).not.toContain(`sk-up-${label}`);
    expect(joined).not.toContain(host);
  });
});
