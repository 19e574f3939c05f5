import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../server/testing/gateway';
import { startMockUpstream, type MockUpstream } from '../../server/testing/mock-upstream';
import { proxiedAccount } from '../../server/testing/proxied-account';
import { rawExchange, requestHead, chunked, type RawOutcome, type RawPiece } from './support/raw-http';
import { currentRuntime, splitRequestLine505 } from '../../server/core/http/uws-loader';

/**
 * uWS parser limits: requests the HTTP parser of uWebSockets.js (uwebsockets@3.0.6) ends
 * before any code of the gateway runs, and that no option or environment variable of that
 * build changes (docs/decisions.md, "Wire and errors" and "Runtime"), heads that arrive in
 * pieces among them. The request fuzz leaves them out of
 * its generator; this file pins what the gateway does with each, so that a uWS upgrade that
 * changes one fails here, loudly, and the decision is made again.
 */

let gw: TestGateway;
let mock: MockUpstream;
let port: number;
/** A funded account whose calls the mock upstream answers. */
let caller: string;
beforeAll(async () => {
  gw = await startTestGateway();
  mock = await startMockUpstream();
  port = Number(new URL(gw.url).port);
  caller = (await proxiedAccount(gw.url, gw.rootKey, mock, 'sk-up-limits-0123456789abcdef')).key;
});
afterAll(async () => {
  await gw?.close();
  await mock?.close();
});

const CHAT = '/v1/chat/completions';
const chatBody = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'limits' }] });
const headers = (extra: [string, string][] = []): [string, string][] => [
  ['Host', '127.0.0.1'], ['Authorization', `Bearer ${caller}`], ['Content-Type', 'application/json'], ['Content-Length', String(chatBody.length)], ...extra,
];
const call = (extra: [string, string][] = []) => requestHead('POST', CHAT, headers(extra)) + chatBody;

/** uWS closes an idle connection after 10 s, checked on a 4 s timer (so 8–12 s; bounds kept loose). */
const IDLE_MIN_MS = 7_000;
const IDLE_MAX_MS = 16_000;

function expectIdleClose(o: RawOutcome, what: string): void {
  expect(o.responses, what).toEqual([]);
  expect(o.ending, what).toBe('closed');
  expect(o.ms, what).toBeGreaterThanOrEqual(IDLE_MIN_MS);
  expect(o.ms, what).toBeLessThan(IDLE_MAX_MS);
}

async function healthy(): Promise<void> {
  expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
}

describe('uWS parser limits', () => {
  it('closes the connection without an answer when a request is pipelined behind an answer that waits for I/O', async () => {
    // uWS parses every request a read brought at once, and will not queue one behind an
    // answer still under way (it would mix the answers up): it closes the connection, the
    // earlier answer included. Answers complete before the parser moves on (no upstream or
    // database to wait for) are pipelined, in order.
    const twoCalls = await rawExchange(port, [call() + call()], { responses: 2, waitMs: 3_000 });
    expect([twoCalls.responses.length, twoCalls.ending]).toEqual([0, 'closed']);
    const health = requestHead('GET', '/healthz', [['Host', 'x']]);
    const callThenHealth = await rawExchange(port, [call() + health], { responses: 2, waitMs: 3_000, methods: ['POST', 'GET'] });
    expect([callThenHealth.responses.length, callThenHealth.ending]).toEqual([0, 'closed']);
    // The operation log is read from the database on every call.
    const keys = requestHead('GET', '/dashboard/logs?size=1', [['Host', 'x'], ['Authorization', `Bearer ${gw.rootKey}`]]);
    const admin = await rawExchange(port, [keys + health], { responses: 2, waitMs: 3_000, methods: ['GET', 'GET'] });
    expect([admin.responses.length, admin.ending]).toEqual([0, 'closed']);
    const sync = await rawExchange(port, [health + health + keys], { responses: 3, waitMs: 3_000, methods: ['GET', 'GET', 'GET'] });
    expect(sync.responses.map((r) => r.status)).toEqual([200, 200, 200]);
    // Each call alone, on its own connection, is served.
    const alone = await rawExchange(port, [call()], { responses: 1, waitMs: 3_000 });
    expect(alone.responses.map((r) => r.status)).toEqual([200]);
    await healthy();
  });

  it('waits for the idle timeout, then closes without an answer, on a head it cannot parse', async () => {
    const std = requestHead('POST', CHAT, headers());
    const cases: [string, string][] = [
      ['NUL in a header value', requestHead('POST', CHAT, headers([['X-Nul', 'a\u0000b']])) + chatBody],
      ['space before a header colon', std.replace('Content-Type:', 'Content-Type :') + chatBody],
      ['obs-fold header continuation', std.replace('Content-Type: application/json\r\n', 'Content-Type: application/json\r\n  ;charset=utf-8\r\n') + chatBody],
      // 98 header lines are read; from 99 on uWS waits for a head end it will not look for.
      ['99 header lines', requestHead('GET', '/healthz', [['Host', 'x'], ...Array.from({ length: 98 }, (_, i) => [`X-H${i}`, 'v'] as [string, string])])],
    ];
    const outcomes = await Promise.all(cases.map(([, bytes]) => rawExchange(port, [bytes], { responses: 1, waitMs: IDLE_MAX_MS + 2_000 })));
    cases.forEach(([what], i) => expectIdleClose(outcomes[i], what));
    // One line fewer is an ordinary request.
    const most = await rawExchange(port, [requestHead('GET', '/healthz', [['Host', 'x'], ...Array.from({ length: 97 }, (_, i) => [`X-H${i}`, 'v'] as [string, string])])], { responses: 1, waitMs: 3_000, methods: ['GET'] });
    expect(most.responses.map((r) => r.status)).toEqual([200]);
    await healthy();
  }, 40_000);

  it('answers its own 400 to a chunk extension', async () => {
    const o = await rawExchange(port, [requestHead('POST', CHAT, headers().filter(([h]) => h !== 'Content-Length').concat([['Transfer-Encoding', 'chunked']])), chunked([chatBody], { extension: ';name=value' })], { responses: 1, waitMs: 3_000 });
    expect(o.responses.map((r) => [r.status, r.body.toString().includes('uWebSockets')])).toEqual([[400, true]]);
    await healthy();
  });

  describe('a head that arrives in pieces', () => {
    /** The loaded binary answers 505 to a request line split after its third byte (uws-loader.ts). */
    const splitLine505 = splitRequestLine505.has(currentRuntime().abi);
    const proxyCall = () => requestHead('POST', CHAT, headers()) + chatBody;
    const adminCall = () => requestHead('GET', '/x-keys', [['Host', '127.0.0.1'], ['Authorization', `Bearer ${gw.rootKey}`]]);
    const routes: [string, () => string, string][] = [['proxy', proxyCall, 'POST'], ['admin', adminCall, 'GET']];

    /** The request cut at `at`, the rest sent once the server has read the first part. */
    const cutAt = (bytes: string, at: number): RawPiece[] => [bytes.slice(0, at), { pauseMs: 15 }, bytes.slice(at)];
    /** Statuses of the request sent cut at each position, a few connections at a time. */
    async function statusesCutAt(bytes: string, positions: number[], method: string): Promise<(number | string)[]> {
      const out: (number | string)[] = [];
      for (let i = 0; i < positions.length; i += 12) {
        const batch = await Promise.all(positions.slice(i, i + 12).map((at) => rawExchange(port, cutAt(bytes, at), { responses: 1, waitMs: 3_000, methods: [method] })));
        out.push(...batch.map((o) => o.responses[0]?.status ?? o.ending));
      }
      return out;
    }
    const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

    it.each(routes)('%s route: a request line cut at any byte is served, except where this binary answers 505', async (_, make, method) => {
      const bytes = make();
      const lineEnd = bytes.indexOf('\r\n') + 2;
      const positions = range(1, lineEnd);
      const got = await statusesCutAt(bytes, positions, method);
      expect(got).toEqual(positions.map((at) => (splitLine505 && at >= 4 ? 505 : 200)));
    }, 60_000);

    it.each(routes)('%s route: a head cut anywhere after its request line is served', async (_, make, method) => {
      const bytes = make();
      const headEnd = bytes.indexOf('\r\n\r\n') + 4;
      const positions = range(bytes.indexOf('\r\n') + 2, headEnd);
      expect(await statusesCutAt(bytes, positions, method)).toEqual(positions.map(() => 200));
    }, 60_000);

    it.each(routes)('%s route: a head sent one byte at a time', async (_, make, method) => {
      const bytes = make();
      const headEnd = bytes.indexOf('\r\n\r\n') + 4;
      const pieces: RawPiece[] = [...bytes.slice(0, headEnd)].flatMap((c): RawPiece[] => [c, { pauseMs: 2 }]);
      const o = await rawExchange(port, [...pieces, bytes.slice(headEnd)], { responses: 1, waitMs: 3_000, methods: [method] });
      expect(o.responses.map((r) => r.status)).toEqual([splitLine505 ? 505 : 200]);
    }, 30_000);

    it('serves a head of 8 KiB cut after its request line, and answers 431 past UWS_HTTP_MAX_HEADERS_SIZE', async () => {
      const head = (size: number) => requestHead('POST', CHAT, headers([['X-Pad', 'a'.repeat(size)]])) + chatBody;
      const cutAfterLine = (bytes: string) => cutAt(bytes, bytes.indexOf('\r\n') + 2);
      const ordinary = await rawExchange(port, cutAfterLine(head(8 * 1024)), { responses: 1, waitMs: 3_000 });
      expect(ordinary.responses.map((r) => r.status)).toEqual([200]);
      const past = await rawExchange(port, cutAfterLine(head(20 * 1024)), { responses: 1, waitMs: 3_000 });
      expect(past.responses.map((r) => r.status)).toEqual([431]);
      // Cut inside its request line, a large head fares as a small one does.
      const inLine = await rawExchange(port, cutAt(head(8 * 1024), 10), { responses: 1, waitMs: 3_000 });
      expect(inLine.responses.map((r) => r.status)).toEqual([splitLine505 ? 505 : 200]);
      await healthy();
    });
  });

  it('answers 431 to a head past UWS_HTTP_MAX_HEADERS_SIZE, or resets when it closes with the rest unread', async () => {
    for (const size of [300_000, 1_000_000]) {
      const o = await rawExchange(port, [call([['X-Big', 'a'.repeat(size)]])], { responses: 1, waitMs: 3_000 });
      // The 431 is written and the socket closed while the client still sends: the kernel
      // answers the unread bytes with a reset, which may overtake the 431.
      if (o.ending === 'reset' && o.responses.length === 0) continue;
      expect(o.responses.map((r) => r.status), `${size}`).toEqual([431]);
    }
    await healthy();
  });
});
