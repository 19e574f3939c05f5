import { afterAll, beforeAll, expect, it } from 'vitest';
import net from 'node:net';
import { startProxyFixture, secret, type ProxyFixture } from '../../server/gateway/test-fixture';
import type { AiProxy } from '../../server/gateway/proxy';
import type { TestAccount } from '../../server/testing/accounts';
import { rawExchange, requestHead, type RawOutcome } from './support/raw-http';
import { sleep } from './support/limited';
import { Watchdog } from './support/watchdog';

/**
 * Slow and abandoned clients: a request head or body that stops half-way must be closed by
 * the server within its idle timeout (uWebSockets.js: 10 s, checked every 4 s), a client
 * that leaves must not stay counted as a call under way, and a shutdown afterwards (the
 * SIGTERM path, `gateway.close()`) must finish at once instead of waiting out the 30 s grace.
 */

/** uWS closes idle HTTP sockets after 10 s; its timer ticks every 4 s; plus slack for a busy machine. */
const IDLE_BOUND_MS = 20_000;

let fx: ProxyFixture;
let account: TestAccount;
let upstreamKey: string;
let port: number;
const watchdog = new Watchdog('slow clients');

beforeAll(async () => {
  fx = await startProxyFixture({ shutdownGraceMs: 30_000 });
  upstreamKey = secret('slow');
  await fx.addKey(1, upstreamKey);
  account = await fx.account({ credit: 100 });
  port = Number(new URL(fx.gw.url).port);
});

afterAll(async () => {
  await fx?.close();
  await watchdog.stop();
});

/**
 * The proxy's count of calls under way, if the AiProxy exposes one (`inFlight` as a number
 * or a function). `undefined` when it does not: the shutdown timing below proves it instead.
 */
function inFlight(proxy: AiProxy): number | undefined {
  const p = proxy as unknown as Record<string, unknown>;
  for (const name of ['inFlight', 'inflight', 'underWay']) {
    const v = p[name];
    if (typeof v === 'number') return v;
    if (typeof v === 'function') return (v as () => number).call(proxy);
  }
  return undefined;
}

const body = () => JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'slow client' }] });
const head = (extra: [string, string][]) => requestHead('POST', '/v1/chat/completions', [['Host', '127.0.0.1'], ['Authorization', `Bearer ${account.key}`], ['Content-Type', 'application/json'], ...extra]);

function closedByServer(name: string, o: RawOutcome): void {
  expect(o.ending === 'closed' || o.ending === 'reset', `${name}: the server kept the socket open for ${o.ms} ms (ending: ${o.ending})`).toBe(true);
  expect(o.ms, `${name}: closed after ${o.ms} ms`).toBeLessThan(IDLE_BOUND_MS);
  // No answer is needed; one that comes must be a 4xx (408) in the envelope.
  for (const r of o.responses) expect(r.status, `${name}: answered ${r.status}`).toBeGreaterThanOrEqual(400);
  for (const r of o.responses) expect(r.status, `${name}: answered ${r.status}`).toBeLessThan(500);
}

it('closes partial heads and partial bodies within the idle timeout, and counts none of them as under way', async () => {
  const b = body();
  const full = head([['Content-Length', String(Buffer.byteLength(b))]]);
  const cases: [string, Parameters<typeof rawExchange>[1]][] = [
    ['a connection that sends nothing', []],
    ['half a request head', [full.slice(0, full.length >> 1)]],
    ['a head without its blank line', [full.slice(0, -2)]],
    ['a body 100 bytes short of its Content-Length', [head([['Content-Length', String(Buffer.byteLength(b) + 100)]]), b]],
    ['a chunked body without its last chunk', [head([['Transfer-Encoding', 'chunked']]), `${Buffer.byteLength(b).toString(16)}\r\n${b}\r\n`]],
    ['a body trickling one byte a second', [head([['Content-Length', String(Buffer.byteLength(b))]]), ...[...b.slice(0, 5)].flatMap((ch) => [ch, { pauseMs: 1000 }])]],
  ];
  const done = watchdog.track('slow sockets');
  const outcomes = await Promise.all(cases.map(([, pieces]) => rawExchange(port, pieces, { responses: 1, waitMs: IDLE_BOUND_MS + 5_000 })));
  done();
  const report = cases.map(([name], i) => `${name}: ${outcomes[i].ending} after ${outcomes[i].ms} ms${outcomes[i].responses.length ? ` (answered ${outcomes[i].responses.map((r) => r.status)})` : ''}`);
  console.log(`slow clients:\n  ${report.join('\n  ')}`);
  cases.forEach(([name], i) => closedByServer(name, outcomes[i]));
  await sleep(100);
  const n = inFlight(fx.gw.gateway.proxy);
  if (n === undefined) console.log('the AiProxy exposes no in-flight count; the shutdown test below proves it instead');
  else expect(n, 'calls counted as under way after every slow client was closed').toBe(0);
}, 60_000);

it('forgets a client that disconnects half-way through its body or during a stream', async () => {
  const b = body();
  // Half the body, then the client goes away.
  await rawExchange(port, [head([['Content-Length', String(Buffer.byteLength(b))]]), b.slice(0, b.length >> 1), { pauseMs: 50 }], { waitMs: 0 });
  // A chunked body cut inside a chunk.
  await rawExchange(port, [head([['Transfer-Encoding', 'chunked']]), `${Buffer.byteLength(b).toString(16)}\r\n${b.slice(0, 10)}`, { pauseMs: 50 }], { waitMs: 0 });
  // A stream the client leaves after its first bytes.
  fx.mock.behave(upstreamKey, { chunks: 30, chunkDelayMs: 100, times: 1 });
  const streamBody = JSON.stringify({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'stream then leave' }] });
  await new Promise<void>((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1', () => s.write(head([['Content-Length', String(Buffer.byteLength(streamBody))]]) + streamBody));
    s.once('data', () => { s.destroy(); resolve(); });
    s.once('error', reject);
    setTimeout(() => { s.destroy(); reject(new Error('the stream sent nothing within 5 s')); }, 5_000);
  });
  await sleep(300);
  const n = inFlight(fx.gw.gateway.proxy);
  if (n !== undefined) expect(n, 'calls still counted as under way after their clients left').toBe(0);
  // The gateway still serves.
  const ok = await fx.openai(account.key).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'after' }] });
  expect(ok.choices[0].message.content).toContain('mock answer');
}, 30_000);

it('shuts down at once after them (the SIGTERM path), well inside the 30 s grace', async () => {
  const t0 = Date.now();
  const done = watchdog.track('gateway.close()');
  await fx.close();
  done();
  const ms = Date.now() - t0;
  fx = undefined as unknown as ProxyFixture;
  expect(ms, `gateway.close() took ${ms} ms: a call was still counted as under way`).toBeLessThan(3_000);
}, 60_000);
