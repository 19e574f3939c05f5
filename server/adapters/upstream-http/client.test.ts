import { afterEach, describe, expect, it } from 'vitest';
import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import { requestWhole } from './whole';
import { client, closeUpstreams, echo, failure, post, upstream } from './test-support';

afterEach(closeUpstreams);

describe('UpstreamClient', () => {
  it('sends the request as given and reuses one keep-alive connection', async () => {
    const up = await upstream(echo);
    const c = client();
    for (let i = 0; i < 3; i++) {
      const r = await requestWhole(c, post(up.url, `{"n":${i}}`));
      expect(r.status).toBe(200);
      expect(r.headers['content-type']).toBe('application/json');
      expect(JSON.parse(r.body.toString())).toEqual({ path: '/v1/echo', body: `{"n":${i}}`, auth: 'Bearer k', type: 'application/json', enc: 'identity' });
    }
    expect(up.connections).toBe(1);
  });

  it('opens at most `connections` per origin and queues the rest', async () => {
    let open = 0;
    let most = 0;
    const up = await upstream((req, res, body) => {
      most = Math.max(most, ++open);
      setTimeout(() => {
        open--;
        res.end(body);
      }, 20);
    });
    const c = client({ connections: 2 });
    const bodies = await Promise.all(Array.from({ length: 7 }, (_, i) => requestWhole(c, post(up.url, `${i}`)).then((r) => r.body.toString())));
    expect(bodies).toEqual(['0', '1', '2', '3', '4', '5', '6']);
    expect(most).toBe(2);
    expect(up.connections).toBe(2);
  });

  it('hands over a chunked response piece by piece as it arrives', async () => {
    const up = await upstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: one\n\n');
      setTimeout(() => res.end('data: two\n\n'), 100);
    });
    const pieces: string[] = [];
    let endedAfterFirst = false;
    await new Promise<void>((resolve, reject) => {
      client().dispatch(post(up.url), {
        onRequestStart() {},
        onResponseStart(_c, status, headers) {
          expect([status, headers['transfer-encoding']]).toEqual([200, 'chunked']);
        },
        onResponseData(_c, chunk) {
          pieces.push(chunk.toString());
        },
        onResponseEnd() {
          endedAfterFirst = pieces.length === 2;
          resolve();
        },
        onResponseError(_c, err) {
          reject(err);
        },
      });
    });
    expect(pieces).toEqual(['data: one\n\n', 'data: two\n\n']);
    expect(endedAfterFirst).toBe(true);
  });

  it('hands over the chunks of one socket read as one piece', async () => {
    const raw = createTcpServer((s) => s.once('data', () => s.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n4\r\none \r\n4\r\ntwo \r\n5\r\nthree\r\n0\r\n\r\n')));
    await new Promise<void>((r) => raw.listen(0, '127.0.0.1', r));
    try {
      const { port } = raw.address() as AddressInfo;
      const pieces: string[] = [];
      await new Promise<void>((resolve, reject) => {
        client().dispatch(post(`http://127.0.0.1:${port}`), {
          onRequestStart() {},
          onResponseStart() {},
          onResponseData: (_c, chunk) => void pieces.push(chunk.toString()),
          onResponseEnd: () => resolve(),
          onResponseError: (_c, err) => reject(err),
        });
      });
      expect(pieces).toEqual(['one two three']);
    } finally {
      raw.close();
    }
  });

  it('stops reading while paused and delivers everything after resume', async () => {
    const piece = 'x'.repeat(64 * 1024);
    const up = await upstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      for (let i = 0; i < 32; i++) res.write(piece);
      res.end();
    });
    let received = 0;
    let pauses = 0;
    await new Promise<void>((resolve, reject) => {
      client().dispatch(post(up.url), {
        onRequestStart() {},
        onResponseStart() {},
        onResponseData(c, chunk) {
          received += chunk.length;
          if (pauses < 5) {
            pauses++;
            c.pause();
            setTimeout(() => c.resume(), 20);
          }
        },
        onResponseEnd: () => resolve(),
        onResponseError: (_c, err) => reject(err),
      });
    });
    expect(received).toBe(32 * piece.length);
    expect(pauses).toBe(5);
  });

  it('does not count a pause (a slow client) as the upstream going silent', async () => {
    const up = await upstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('x'.repeat(1024));
      // Silent for longer than the body timeout, but mostly while the reader is paused.
      setTimeout(() => res.end('y'), 1000);
    });
    let body = '';
    await new Promise<void>((resolve, reject) => {
      client().dispatch(post(up.url, '{}', { bodyTimeout: 600 }), {
        onRequestStart() {},
        onResponseStart() {},
        onResponseData(c, chunk) {
          if (!body) {
            c.pause();
            setTimeout(() => c.resume(), 900);
          }
          body += chunk.toString();
        },
        onResponseEnd: () => resolve(),
        onResponseError: (_c, err) => reject(err),
      });
    });
    expect(body).toBe(`${'x'.repeat(1024)}y`);
  });

  it('opens a new connection when the upstream closed the idle one, or asked to close', async () => {
    const up = await upstream(echo);
    const c = client();
    await requestWhole(c, post(up.url));
    for (const s of up.sockets) s.destroy();
    await expect.poll(() => up.sockets.size).toBe(0);
    expect((await requestWhole(c, post(up.url))).status).toBe(200);
    expect(up.connections).toBe(2);

    up.answer((_req, res) => {
      res.setHeader('connection', 'close');
      res.end('bye');
    });
    // The kept connection serves the first and is closed after it; each later one needs its own.
    await requestWhole(c, post(up.url));
    await requestWhole(c, post(up.url));
    expect(up.connections).toBe(3);
  });

  it('marks a kept connection that closed before answering as stale, and a fresh one not', async () => {
    let drop = false;
    const up = await upstream((req, res) => (drop ? req.socket.destroy() : res.end('ok')));
    const c = client();
    await requestWhole(c, post(up.url));
    drop = true;
    const onKept = await failure(c, post(up.url));
    expect([onKept.code, onKept.staleConnection]).toEqual(['UPSTREAM_SOCKET', true]);
    const onFresh = await failure(c, post(up.url));
    expect([onFresh.code, onFresh.staleConnection]).toEqual(['UPSTREAM_SOCKET', false]);
  });

  it('keeps a connection no longer than the upstream says it will', async () => {
    const up = await upstream((_req, res) => {
      res.setHeader('keep-alive', 'timeout=1');
      res.end('ok');
    });
    const c = client();
    await requestWhole(c, post(up.url));
    await requestWhole(c, post(up.url));
    expect(up.connections).toBe(2);
  });

  it('refuses a header that would inject lines, and the connection stays usable', async () => {
    const up = await upstream(echo);
    const c = client({ connections: 1 });
    await requestWhole(c, post(up.url));
    const err = await failure(c, post(up.url, '{}', { headers: { 'x-evil': 'a\r\nx-injected: 1' } }));
    expect(err.code).toBe('UPSTREAM_INVALID_REQUEST');
    expect((await requestWhole(c, post(up.url))).status).toBe(200);
    expect(up.connections).toBe(1);
  });

  it('ends requests under way and waiting when closed', async () => {
    const up = await upstream(() => undefined);
    const c = client({ connections: 1 });
    const first = failure(c, post(up.url));
    const queued = failure(c, post(up.url));
    await expect.poll(() => up.sockets.size).toBe(1);
    await c.close();
    expect((await first).code).toBe('UPSTREAM_CLOSED');
    expect((await queued).code).toBe('UPSTREAM_CLOSED');
    expect((await failure(c, post(up.url))).code).toBe('UPSTREAM_CLOSED');
  });
});
