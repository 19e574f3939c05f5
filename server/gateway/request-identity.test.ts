import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { hello, secret, startProxyFixture, type ProxyFixture } from './test-fixture';
import { startTestGateway } from '../testing/gateway';
import { clientRequestId } from './request-id';

let f: ProxyFixture;
let upstream: string;
let user: Awaited<ReturnType<ProxyFixture['account']>>;
beforeAll(async () => {
  f = await startProxyFixture();
  upstream = secret('identity');
  await f.addKey(1, upstream);
  user = await f.account({ level: 1 });
});
afterAll(async () => { await f?.close(); });

const GENERATED = /^[0-9a-f]{8}-[0-9a-z]+$/;
const TIMING = /^gateway;dur=(\d+\.\d\d)$/;

const chat = (headers: Record<string, string>, body: unknown = { model: 'gpt-4o-mini', messages: hello }) =>
  fetch(`${f.gw.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${user.key}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

const requestIdsOf = async () => (await f.gw.gateway.database.rows<{ request_id: string }>(sql`select request_id from usage_records where account_id = ${user.id} order by created_at`)).map((r) => r.request_id);

describe('x-request-id', () => {
  it('echoes the client ID on a success, a stream and a refusal, and names the usage record with it', async () => {
    const ok = await chat({ 'x-request-id': 'client-req_1.a:b' });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('x-request-id')).toBe('client-req_1.a:b');
    const stream = await chat({ 'x-request-id': 'client-stream-2' }, { model: 'gpt-4o-mini', messages: hello, stream: true });
    expect(stream.headers.get('x-request-id')).toBe('client-stream-2');
    expect(stream.headers.get('content-type')).toContain('text/event-stream');
    await stream.text();
    const refused = await fetch(`${f.gw.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-request-id': 'client-refused-3' }, body: '{}' });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('x-request-id')).toBe('client-refused-3');
    expect((await refused.json()).error.request_id).toBe('client-refused-3');
    await f.gw.gateway.usage.flush();
    expect((await requestIdsOf()).slice(-2)).toEqual(['client-req_1.a:b', 'client-stream-2']);
  });

  it('generates one when the client sent none or an unusable one', async () => {
    const none = await chat({});
    expect(none.headers.get('x-request-id')).toMatch(GENERATED);
    for (const bad of ['x'.repeat(129), 'has space', 'semi;colon', '<script>', 'naïve']) {
      const r = await chat({ 'x-request-id': bad });
      expect(r.status).toBe(200);
      expect(r.headers.get('x-request-id'), bad).toMatch(GENERATED);
    }
    expect((await chat({ 'x-request-id': 'y'.repeat(128) })).headers.get('x-request-id')).toBe('y'.repeat(128));
    // Two answers never share a generated ID.
    const a = (await chat({})).headers.get('x-request-id');
    const b = (await chat({})).headers.get('x-request-id');
    expect(a).not.toBe(b);
  });

  it('is one header: an upstream x-request-id or server-timing is not passed on', async () => {
    const r = await chat({});
    const all = [...r.headers].filter(([k]) => k === 'x-request-id' || k === 'server-timing');
    expect(all.map(([k]) => k).sort()).toEqual(['server-timing', 'x-request-id']);
    expect(r.headers.get('x-request-id')).not.toContain(',');
  });

  it('validates: 1 to 128 safe characters', () => {
    expect(clientRequestId(undefined)).toBeUndefined();
    expect(clientRequestId('')).toBeUndefined();
    expect(clientRequestId('a,b')).toBeUndefined();
    expect(clientRequestId('\u0000')).toBeUndefined();
    expect(clientRequestId('550e8400-e29b-41d4-a716-446655440000')).toBe('550e8400-e29b-41d4-a716-446655440000');
  });
});

describe('W3C trace context with tracing off', () => {
  it("passes a client's well-formed traceparent and tracestate upstream unchanged, a malformed one not at all", async () => {
    const parent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    expect((await chat({ traceparent: parent, tracestate: 'congo=t61rcWkgMzE' })).status).toBe(200);
    const sent = f.mock.requests.filter((q) => q.credential === upstream).at(-1)!;
    expect(sent.headers.traceparent).toBe(parent);
    expect(sent.headers.tracestate).toBe('congo=t61rcWkgMzE');
    expect((await chat({ traceparent: 'not-a-traceparent' })).status).toBe(200);
    expect(f.mock.requests.filter((q) => q.credential === upstream).at(-1)!.headers.traceparent).toBeUndefined();
  });
});

describe('server-timing', () => {
  it("carries the gateway's own time, without the time spent waiting on the upstream", async () => {
    const slow = secret('identity-slow');
    await f.addKey(2, slow);
    f.mock.behave(slow, { delayMs: 300 });
    const patient = await f.account({ level: 2 });
    const started = performance.now();
    const r = await fetch(`${f.gw.url}/v1/chat/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${patient.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: hello }),
    });
    const elapsed = performance.now() - started;
    expect(r.status).toBe(200);
    const own = Number(TIMING.exec(r.headers.get('server-timing') ?? '')?.[1]);
    expect(elapsed).toBeGreaterThan(300);
    expect(own).toBeGreaterThanOrEqual(0);
    // The 300 ms upstream wait is not the gateway's.
    expect(own).toBeLessThan(100);
    // Refusals and streams carry it too.
    const refused = await fetch(`${f.gw.url}/v1/chat/completions`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
    expect(refused.headers.get('server-timing')).toMatch(TIMING);
    const stream = await chat({}, { model: 'gpt-4o-mini', messages: hello, stream: true });
    expect(stream.headers.get('server-timing')).toMatch(TIMING);
    await stream.text();
  });
});

describe('access log', () => {
  it('one info line per proxied call with its facts, never a key or a body', async () => {
    const from = f.gw.logs.length;
    const r = await chat({ 'x-request-id': 'access-log-1' }, { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'secret prompt text 9f8e7d' }] });
    expect(r.status).toBe(200);
    const refused = await fetch(`${f.gw.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: 'Bearer sk-wrong-wrong-wrong-wrong', 'content-type': 'application/json' }, body: '{}' });
    expect(refused.status).toBe(401);
    await f.gw.gateway.usage.flush();
    const [usage] = (await f.usage(user.id)).slice(-1);
    const lines = f.gw.logs.slice(from).map((l) => JSON.parse(l)).filter((l) => l.event === 'proxy_request');
    expect(lines).toHaveLength(2);
    const [served, denied] = lines;
    expect(served).toMatchObject({
      level: 'info', key_level: 1, request: 'access-log-1', method: 'POST', path: '/v1/chat/completions', status: 200, model: 'gpt-4o-mini',
      account: user.id, attempts: 1, input_tokens: usage.prompt, output_tokens: usage.completion,
    });
    expect(served.key).toEqual(expect.any(Number));
    expect(served.credit).toBeCloseTo(usage.credit_used, 12);
    expect(served.duration_ms).toBeGreaterThan(0);
    expect(served.overhead_ms).toBeGreaterThanOrEqual(0);
    expect(denied).toMatchObject({ status: 401, attempts: 0, input_tokens: 0, credit: 0 });
    expect(denied.model).toBeUndefined();
    const text = f.gw.logs.slice(from).join('\n');
    for (const s of [user.key, upstream, 'sk-wrong-wrong-wrong-wrong', 'secret prompt text 9f8e7d', f.mock.url]) expect(text).not.toContain(s);
  });

  it('ACCESS_LOG=off: no line', async () => {
    const quiet = await startTestGateway({ accessLog: 'off', databaseUrl: 'memory://' });
    try {
      const r = await fetch(`${quiet.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      expect(r.status).toBe(401);
      expect(r.headers.get('x-request-id')).toMatch(GENERATED);
      expect(quiet.logs.some((l) => l.includes('"proxy_request"'))).toBe(false);
    } finally {
      await quiet.close();
    }
  });
});
