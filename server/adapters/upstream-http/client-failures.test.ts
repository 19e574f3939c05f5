import { afterEach, beforeAll, afterAll, describe, expect, it } from 'vitest';
import { createServer as createTlsServer } from 'node:https';
import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { requestWhole } from './whole';
import { type ResponseController } from './types';
import { client, closeUpstreams, echo, failure, post, upstream } from './test-support';
import { needs } from '../../testing/requirements';

afterEach(closeUpstreams);

describe('UpstreamClient', () => {
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

  it('with a first-byte deadline, the head and the first body piece must both come within it, counted from the request', async () => {
    const up = await upstream((req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.flushHeaders();
      // Headers at once, the first event late (or never), then a steady trickle.
      if (req.url === '/late') setTimeout(() => res.end('data: 1\n\n'), 400);
      if (req.url === '/trickle') {
        let n = 0;
        const t = setInterval(() => { res.write('data: x\n\n'); if (++n === 4) { clearInterval(t); res.end(); } }, 100);
      }
    });
    const c = client();
    const t0 = Date.now();
    const late = await failure(c, post(up.url, '{}', { path: '/late', headersTimeout: 250, bodyTimeout: 2000, firstByteTimeout: 250 }));
    expect(late.code).toBe('UPSTREAM_FIRST_BYTE_TIMEOUT');
    expect(Date.now() - t0).toBeLessThan(390);
    // Past the first piece the silence between pieces is the body timeout's, not the deadline's.
    const whole = await requestWhole(c, post(up.url, '{}', { path: '/trickle', headersTimeout: 250, bodyTimeout: 2000, firstByteTimeout: 250 }));
    expect(whole.body.toString()).toBe('data: x\n\n'.repeat(4));
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

describe('UpstreamClient over TLS', needs('openssl'), () => {
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
