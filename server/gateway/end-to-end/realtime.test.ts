import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import net from 'node:net';
import WebSocket from 'ws';
import { OpenAIRealtimeWS } from 'openai/realtime/ws';
import { AUDIO_DELTA_BYTES, PCM_BYTES_PER_TOKEN } from '../../testing/mock-upstream/realtime';
import { failingPair, keyedUser, sleep, startProxyFixture, type ProxyFixture } from '../test-fixture';

/**
 * Realtime sessions over WebSocket through a real gateway and the mock upstream, with the
 * openai SDK's realtime client: per-response billing, the subprotocol key, failover of a
 * refused upgrade, closing when credit or a limit runs out, and backpressure to the upstream.
 */
let f: ProxyFixture;
const PRICING = { ChatPricing: { 'metered-realtime': { InputText: 1, InputAudio: 1000, OutputText: 1, OutputAudio: 1 } } };

beforeAll(async () => {
  f = await startProxyFixture({ userMinBalance: 0 });
  await f.config({ PRICING: JSON.stringify(PRICING) });
}, 60_000);
afterAll(async () => { await f?.close(); });


/** Events of one type, as they arrive. */
function waitFor(rt: OpenAIRealtimeWS, type: string): Promise<any> {
  return new Promise((resolve) => rt.once(type as any, resolve));
}

const audio = (seconds: number) => Buffer.alloc(seconds * 10 * PCM_BYTES_PER_TOKEN, 3).toString('base64');

/**
 * The SDK always dials wss://; the gateway here listens without TLS, so its socket is opened
 * as plain TCP to the same port (`ws`'s createConnection). Everything above TCP is the SDK's.
 */
async function openSession(key: string, model: string): Promise<OpenAIRealtimeWS> {
  const port = Number(new URL(f.gw.url).port);
  const rt = new OpenAIRealtimeWS({ model, options: { createConnection: () => net.connect(port, '127.0.0.1') } as any }, f.openai(key));
  rt.on('error', () => {});
  await new Promise<void>((resolve, reject) => {
    rt.socket.once('open', () => resolve());
    rt.socket.once('error', reject);
    rt.socket.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
  });
  return rt;
}

const closed = (ws: WebSocket) => new Promise<{ code: number; reason: string }>((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));

describe('realtime sessions', () => {
  it('relays a session with two responses and bills each once, by text, audio and cached tokens', async () => {
    const { up, user, level } = await keyedUser(f, 'realtime');
    f.mock.behave(up, { usage: { prompt_tokens: 0, completion_tokens: 0, cached_tokens: 2 } });
    const rt = await openSession(user.key, 'gpt-realtime');
    rt.send({ type: 'session.update', session: { type: 'realtime', instructions: 'Answer briefly, please.' } });
    rt.send({ type: 'input_audio_buffer.append', audio: audio(2) });
    rt.send({ type: 'input_audio_buffer.commit' });
    const deltas: string[] = [];
    rt.on('response.output_audio.delta', (e) => deltas.push(e.delta));
    const first = waitFor(rt, 'response.done');
    rt.send({ type: 'response.create' });
    const done1 = await first;
    rt.send({ type: 'input_audio_buffer.append', audio: audio(1) });
    const second = waitFor(rt, 'response.done');
    rt.send({ type: 'response.create' });
    const done2 = await second;
    rt.close();
    await closed(rt.socket);
    expect(deltas).toHaveLength(6);
    expect(Buffer.from(deltas[0], 'base64')).toHaveLength(AUDIO_DELTA_BYTES);
    // The upstream got the provider key, never the client's.
    const rec = f.mock.realtime.at(-1)!;
    expect(rec).toMatchObject({ credential: up, model: 'gpt-realtime' });
    expect(JSON.stringify(rec.headers)).not.toContain(user.key);
    const rows = await f.usage(user.id);
    expect(rows).toHaveLength(2);
    // gpt-realtime: text in 4, cached text 0.4, audio in 32, text out 16, audio out 64 per million tokens.
    for (const [row, done] of [[rows[0], done1], [rows[1], done2]] as const) {
      const u = done.response.usage;
      const textIn = u.input_token_details.text_tokens - 2;
      const cost = (textIn * 4 + 2 * 0.4 + u.input_token_details.audio_tokens * 32 + u.output_token_details.text_tokens * 16 + u.output_token_details.audio_tokens * 64) / 1e6;
      expect(row).toMatchObject({ model: 'gpt-realtime', endpoint: '/v1/realtime', prompt: u.input_tokens, completion: u.output_tokens, cached: 2 });
      expect(row.credit_used).toBeCloseTo(cost, 12);
    }
    expect(done1.response.usage.input_token_details.audio_tokens).toBe(20);
    expect(done2.response.usage.input_token_details.audio_tokens).toBe(10);
    expect(f.gw.gateway.proxy.admission.open).toBe(0);
    expect(f.gw.gateway.proxy.realtime.count).toBe(0);
    // In /metrics each response is a call of the route, and the session one more (status 101).
    const metrics = await (await fetch(`${f.gw.url}/metrics`)).text();
    const series = (cls: string) => new RegExp(`^switchyard_proxy_requests_total\\{[^}]*route="/v1/realtime"[^}]*status_class="${cls}"[^}]*level="${level}"[^}]*\\} (\\d+)$`, 'm').exec(metrics)?.[1];
    expect([series('2xx'), series('1xx')]).toEqual(['2', '1']);
  });

  it('takes the key from the openai-insecure-api-key subprotocol, answers "realtime", and sends neither upstream', async () => {
    const { user } = await keyedUser(f, 'subprotocol');
    const ws = new WebSocket(`${f.gw.url.replace('http', 'ws')}/v1/realtime?model=gpt-realtime`, ['realtime', `openai-insecure-api-key.${user.key}`]);
    await new Promise((r, j) => { ws.once('open', r); ws.once('error', j); });
    expect(ws.protocol).toBe('realtime');
    const rec = f.mock.realtime.at(-1)!;
    expect(JSON.stringify(rec.headers)).not.toContain(user.key);
    expect(rec.headers['sec-websocket-protocol']).toBeUndefined();
    ws.close();
    await closed(ws);
  });

  it('fails over to the next key when an upstream refuses the upgrade', async () => {
    const { bad, good, user } = await failingPair(f, 'rt', { status: 503 });
    const before = f.mock.realtime.length;
    for (let i = 0; i < 2; i++) {
      const rt = await openSession(user.key, 'gpt-realtime');
      rt.close();
      await closed(rt.socket);
    }
    const tried = f.mock.realtime.slice(before).map((r) => r.credential);
    expect(tried.filter((c) => c === good)).toHaveLength(2);
    expect(tried).toContain(bad);
  });

  it('refuses the upgrade with 402 when the first response cannot be reserved, and closes with 1008 when credit runs out', async () => {
    const poor = await keyedUser(f, 'rt-poor', { credit: 0.001 });
    const refused = new WebSocket(`${f.gw.url.replace('http', 'ws')}/v1/realtime?model=gpt-realtime`, { headers: { authorization: `Bearer ${poor.user.key}` } });
    const status = await new Promise<number>((resolve) => refused.once('unexpected-response', (_q, res) => resolve(res.statusCode!)));
    expect(status).toBe(402);
    // metered-realtime: audio input at 1,000 per million tokens. 20 s of audio (200 tokens) costs 0.2 in the first
    // response; the second must reserve the conversation again (0.2) with 0.1 left.
    const { user } = await keyedUser(f, 'rt-credit', { credit: 0.3 });
    const rt = await openSession(user.key, 'metered-realtime');
    rt.send({ type: 'input_audio_buffer.append', audio: audio(20) });
    const first = waitFor(rt, 'response.done');
    rt.send({ type: 'response.create' });
    const u = (await first).response.usage;
    const end = closed(rt.socket);
    rt.send({ type: 'response.create' });
    const { code, reason } = await end;
    expect(code).toBe(1008);
    expect(reason).toMatch(/^insufficient_balance/);
    const rows = await f.usage(user.id);
    expect(rows).toHaveLength(1);
    expect(u.input_token_details.audio_tokens).toBe(200);
    expect(rows[0].credit_used).toBeCloseTo((200 * 1000 + u.input_token_details.text_tokens + u.output_tokens) / 1e6, 12);
    expect(f.gw.gateway.proxy.admission.open).toBe(0);
  });

  it('closes with 1008 when a request limit runs out mid-session', async () => {
    // The session's start admits its first response; the second is the one past 1 a minute.
    const { user } = await keyedUser(f, 'rt-rpm', { rpm: 1 });
    const rt = await openSession(user.key, 'gpt-realtime');
    const first = waitFor(rt, 'response.done');
    rt.send({ type: 'response.create' });
    await first;
    const end = closed(rt.socket);
    rt.send({ type: 'response.create' });
    const { code, reason } = await end;
    expect(code).toBe(1008);
    expect(reason).toMatch(/^rate_limit_exceeded/);
  });

  it('pauses the upstream while a client reads slowly, so the gateway holds a bounded backlog, and delivers everything after', async () => {
    const { up, user } = await keyedUser(f, 'rt-slow');
    f.mock.behave(up, { chunks: 1500 }); // 1,500 deltas of 12.8 KB of base64: about 19 MB
    const rt = await openSession(user.key, 'gpt-realtime');
    let deltas = 0;
    rt.on('response.output_audio.delta', () => deltas++);
    const done = waitFor(rt, 'response.done');
    const socket = (rt.socket as any)._socket as import('node:net').Socket;
    socket.pause();
    rt.send({ type: 'response.create' });
    const rec = f.mock.realtime.at(-1)!;
    let upstreamBacklog = 0;
    for (let i = 0; i < 100 && upstreamBacklog < 4 * 1024 * 1024; i++) {
      await sleep(20);
      upstreamBacklog = rec.buffered();
    }
    // The mock could not hand its frames on: the gateway stopped reading it.
    expect(upstreamBacklog).toBeGreaterThan(4 * 1024 * 1024);
    socket.resume();
    await done;
    expect(deltas).toBe(1500);
    rt.close();
    await closed(rt.socket);
  }, 60_000);

  it('refuses to mint realtime client secrets', async () => {
    const { user } = await keyedUser(f, 'rt-secret');
    const r = await f.gw.as(user.key).post('/v1/realtime/client_secrets', { session: { type: 'realtime', model: 'gpt-realtime' } });
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe('client_secrets_unsupported');
  });
});
