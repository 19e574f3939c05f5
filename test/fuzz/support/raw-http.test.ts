import { afterAll, beforeAll, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chunked, rawExchange, requestHead } from './raw-http';

// The fuzzer's raw client judges the gateway; here it is judged against Node's own server.
let server: Server;
let port: number;

beforeAll(async () => {
  server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (d) => parts.push(d));
    req.on('end', () => {
      const body = Buffer.concat(parts).toString();
      if (req.url === '/chunked') {
        res.write('ab');
        res.end('cd');
        return;
      }
      res.setHeader('content-type', 'text/plain');
      res.end(`${req.method} ${req.url} ${body}`);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});

afterAll(() => new Promise<void>((r) => server.close(() => r())));

it('reads pipelined answers, chunked ones and HEAD answers without a body', async () => {
  const o = await rawExchange(port, [
    requestHead('POST', '/a', [['Host', 'x'], ['Content-Length', '3']]) + 'xyz'
    + requestHead('GET', '/chunked', [['Host', 'x']])
    + requestHead('HEAD', '/c', [['Host', 'x']]),
  ], { responses: 3, waitMs: 2000, methods: ['POST', 'GET', 'HEAD'] });
  expect(o.ending).toBe('answered');
  expect(o.responses.map((r) => r.status)).toEqual([200, 200, 200]);
  expect(o.responses[0].body.toString()).toBe('POST /a xyz');
  expect(o.responses[1].body.toString()).toBe('abcd');
  expect(o.responses[2].body.length).toBe(0);
});

it('sends a chunked body with extensions and trailers', async () => {
  const o = await rawExchange(port, [requestHead('POST', '/t', [['Host', 'x'], ['Transfer-Encoding', 'chunked']]), chunked(['hel', 'lo'], { extension: ';a=b', trailers: ['X-T: 1'], upperHex: true })], { responses: 1, waitMs: 2000 });
  expect(o.responses[0].body.toString()).toBe('POST /t hello');
});

it('ends in a bounded wait when the server waits for bytes that never come', async () => {
  const o = await rawExchange(port, [requestHead('POST', '/w', [['Host', 'x'], ['Content-Length', '10']]), 'abc'], { responses: 1, waitMs: 300 });
  expect(o.ending).toBe('waited');
  expect(o.responses).toEqual([]);
});

it('tells a refused connection apart', async () => {
  const closed = createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  const dead = (closed.address() as AddressInfo).port;
  await new Promise<void>((r) => closed.close(() => r()));
  const o = await rawExchange(dead, ['GET / HTTP/1.1\r\n\r\n'], { waitMs: 300 });
  expect(o.ending).toBe('refused');
});
