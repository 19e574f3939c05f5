import { afterEach, beforeAll, afterAll, describe, expect, it } from 'vitest';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { UpstreamClient, type UpstreamClientOptions } from './client';
import { requestWhole } from './whole';
import { UpstreamHttpError, type ResponseController, type UpstreamRequest } from './types';

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

/** A loopback upstream that counts the TCP connections it accepted. */
class Upstream {
  connections = 0;
  readonly sockets = new Set<Socket>();
  constructor(readonly server: Server, private handler: Handler) {
    server.on('connection', (s: Socket) => {
      this.connections++;
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    server.on('request', (req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => this.handler(req, res, body));
    });
  }

  answer(h: Handler): void {
    this.handler = h;
  }
}

const servers: Server[] = [];
const clients: UpstreamClient[] = [];

async function upstream(handler: Handler, make: () => Server = () => createServer()): Promise<Upstream & { url: string }> {
  const server = make();
  const u = new Upstream(server, handler);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return Object.assign(u, { url: `${'setSecureContext' in server ? 'https' : 'http'}://127.0.0.1:${port}` });
}

function client(o: Partial<UpstreamClientOptions> = {}): UpstreamClient {
  const c = new UpstreamClient({ connections: 8, connectTimeoutMs: 2000, keepAliveMs: 30_000, ...o });
  clients.push(c);
  return c;
}

const post = (origin: string, body = '{"q":1}', extra: Partial<UpstreamRequest> = {}): UpstreamRequest => ({
  origin, path: '/v1/echo', method: 'POST', headers: { authorization: 'Bearer k' }, contentType: 'application/json',
  body: Buffer.from(body), headersTimeout: 2000, bodyTimeout: 2000, ...extra,
});

const echo: Handler = (req, res, body) => {
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ path: req.url, body, auth: req.headers.authorization, type: req.headers['content-type'], enc: req.headers['accept-encoding'] }));
};

/** The error a request ends with. */
async function failure(c: UpstreamClient, req: UpstreamRequest): Promise<UpstreamHttpError> {
  const err = await requestWhole(c, req).then(() => null, (e: UpstreamHttpError) => e);
  if (!err) throw new Error('the request succeeded');
  return err;
}

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  for (const s of servers.splice(0)) {
    s.closeAllConnections?.();
    await new Promise((r) => s.close(r));
  }
});

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

  it('times out waiting for the head, and between body pieces, closing the connection', async () => {
    const up = await upstream((req, res) => {
      if (req.url === '/silent') return;
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('first');
    });
    const c = client();
    const head = await failure(c, post(up.url, '{}', { path: '/silent', headersTimeout: 150 }));
    expect(head.code).toBe('UPSTREAM_HEADERS_TIMEOUT');
    const body = await failure(c, post(up.url, '{}', { bodyTimeout: 150 }));
    expect(body.code).toBe('UPSTREAM_BODY_TIMEOUT');
    await expect.poll(() => up.sockets.size).toBe(0);
  });

  it('times out a connection that never completes its TLS handshake', async () => {
    // It reads (and so sees the client hang up) but never answers the handshake.
    const silent = createTcpServer((s) => s.resume());
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      const { port } = silent.address() as AddressInfo;
      const err = await failure(client({ connectTimeoutMs: 150 }), post(`https://127.0.0.1:${port}`));
      expect(err.code).toBe('UPSTREAM_CONNECT_TIMEOUT');
    } finally {
      await new Promise((r) => silent.close(r));
    }
  });

  it('reports a refused connection with the system error', async () => {
    const free = createTcpServer();
    await new Promise<void>((r) => free.listen(0, '127.0.0.1', r));
    const { port } = free.address() as AddressInfo;
    await new Promise((r) => free.close(r));
    const err = await failure(client(), post(`http://127.0.0.1:${port}`));
    expect(err.code).toBe('UPSTREAM_SOCKET');
    expect(err.message).toContain('ECONNREFUSED');
  });

  it('aborts mid-response: the handler hears the reason once and the connection closes', async () => {
    const up = await upstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: one\n\n');
    });
    const reason = new Error('the client went away');
    const events: string[] = [];
    await new Promise<void>((resolve) => {
      client().dispatch(post(up.url), {
        onRequestStart() {},
        onResponseStart() { events.push('start'); },
        onResponseData(c: ResponseController) {
          events.push('data');
          c.abort(reason);
          c.abort(reason);
        },
        onResponseEnd() { events.push('end'); },
        onResponseError(_c, err) {
          events.push(err === reason ? 'error(reason)' : `error(${err.message})`);
          setTimeout(resolve, 50);
        },
      });
    });
    expect(events).toEqual(['start', 'data', 'error(reason)']);
    await expect.poll(() => up.sockets.size).toBe(0);
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

  it('reports an upstream that breaks HTTP as a protocol error', async () => {
    const broken = createTcpServer((s) => s.once('data', () => s.end('HTTP/1.1 200 OK\r\ncontent-length: 5, 6\r\n\r\nhello')));
    await new Promise<void>((r) => broken.listen(0, '127.0.0.1', r));
    try {
      const { port } = broken.address() as AddressInfo;
      const err = await failure(client(), post(`http://127.0.0.1:${port}`));
      expect(err.code).toBe('UPSTREAM_PROTOCOL');
    } finally {
      await new Promise((r) => broken.close(r));
    }
  });
});

describe('UpstreamClient over TLS', () => {
  let dir: string;
  let cert: Buffer;
  let key: Buffer;

  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'switchyard-tls-'));
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
      '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem'),
      '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost',
    ], { stdio: 'ignore' });
    cert = readFileSync(path.join(dir, 'cert.pem'));
    key = readFileSync(path.join(dir, 'key.pem'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('speaks HTTPS to a trusted upstream, over one kept connection', async () => {
    const up = await upstream(echo, () => createTlsServer({ cert, key }));
    const c = client({ tls: { ca: cert } });
    for (let i = 0; i < 2; i++) {
      const r = await requestWhole(c, post(up.url, '{"tls":true}'));
      expect(JSON.parse(r.body.toString()).body).toBe('{"tls":true}');
    }
    expect(up.connections).toBe(1);
  });

  it('refuses an upstream whose certificate it cannot verify', async () => {
    const up = await upstream(echo, () => createTlsServer({ cert, key }));
    const err = await failure(client(), post(up.url));
    expect(err.code).toBe('UPSTREAM_SOCKET');
    expect(err.message).toMatch(/self.signed|certificate/i);
  });
});
