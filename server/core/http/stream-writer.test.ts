import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import net from 'node:net';
import { listenExclusive, uWS } from './uws';
import { StreamingExchange } from './stream-writer';

const omit = (name: string) => name === 'set-cookie';
let app: uWS.TemplatedApp;
let socket: uWS.us_listen_socket;
let port: number;

beforeAll(async () => {
  app = uWS.App();
  app.post('/whole', (res, req) => {
    const ex = new StreamingExchange(res, req, 1024, []);
    ex.relay(201, { 'x-one': 'a', 'x-many': ['b', 'c'], 'set-cookie': 'secret=1' }, omit, Buffer.from('whole body'));
  });
  app.post('/stream', (res, req) => {
    const ex = new StreamingExchange(res, req, 1024, []);
    const out = ex.openStream(200, { 'content-type': 'text/event-stream', 'set-cookie': 'x' }, omit);
    // 8 MiB: more than the socket takes at once, so some writes must wait for a drain.
    const piece = Buffer.alloc(256 * 1024, 'x');
    let waited = 0;
    (async () => {
      for (let i = 0; i < 32; i++) {
        const wait = out.write(piece);
        if (wait) { waited++; await wait; }
      }
      out.end(Buffer.from(`|waited:${waited > 0}`));
    })();
  });
  app.post('/abort', (res, req) => {
    const ex = new StreamingExchange(res, req, 1024, []);
    const out = ex.openStream(200, { 'content-type': 'text/event-stream' }, omit);
    // Later, as an upstream's data arrives: outside the handler's own cork.
    setImmediate(() => {
      out.write(Buffer.from('data: first\n\n'));
      out.abort();
    });
  });
  ({ socket, port } = await listenExclusive(app, '127.0.0.1', 0));
});
afterAll(() => { uWS.us_listen_socket_close(socket); });

/** A raw HTTP/1.1 exchange: the whole byte stream the server sent until it closed. */
function raw(path: string): Promise<string> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => s.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`));
    const parts: Buffer[] = [];
    s.on('data', (d) => parts.push(d));
    s.on('close', () => resolve(Buffer.concat(parts).toString('latin1')));
  });
}

describe('StreamingExchange', () => {
  it('relays a whole answer with repeated headers, leaving out those the filter names', async () => {
    const r = await raw('/whole');
    expect(r).toMatch(/^HTTP\/1.1 201 Created\r\n/);
    expect(r).toContain('x-one: a\r\n');
    expect(r).toContain('x-many: b\r\nx-many: c\r\n');
    expect(r).not.toContain('set-cookie');
    expect(r.endsWith('\r\n\r\nwhole body')).toBe(true);
  });

  it('streams with backpressure: every byte arrives, in order, and the end is clean', async () => {
    const r = await raw('/stream');
    expect(r).not.toContain('set-cookie');
    expect(r).toContain('Transfer-Encoding: chunked');
    expect(r.trimEnd().endsWith('0')).toBe(true);
    const body = r.slice(r.indexOf('\r\n\r\n') + 4).replace(/\r\n[0-9a-f]+\r\n/g, '').replace(/^[0-9a-f]+\r\n/, '');
    expect(body.split('x').length - 1).toBe(32 * 256 * 1024);
    expect(body).toContain('|waited:true');
  });

  it('closes the connection without the terminating chunk on abort', async () => {
    const r = await raw('/abort');
    expect(r).toContain('data: first');
    expect(r).not.toMatch(/\r\n0\r\n\r\n$/);
  });
});
