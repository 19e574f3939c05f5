import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import net from 'node:net';
import { startTestGateway, type TestGateway } from '../../testing/gateway';
import { expectEnvelope } from '../../testing/http';

let gw: TestGateway;
beforeAll(async () => { gw = await startTestGateway({ maxBodyBytes: 64 * 1024 }); });
afterAll(async () => { await gw?.close(); });

/** Sends raw bytes and returns whatever comes back until the server closes or `waitMs` passes. */
function raw(payload: string | Buffer, opts: { destroyAfterWrite?: boolean; waitMs?: number } = {}): Promise<string> {
  const { port } = new URL(gw.url);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), '127.0.0.1', () => {
      socket.write(payload);
      if (opts.destroyAfterWrite) { socket.destroy(); resolve(''); }
    });
    let data = '';
    socket.on('data', (d) => (data += d));
    socket.on('close', () => resolve(data));
    socket.on('error', () => resolve(data));
    setTimeout(() => { socket.destroy(); resolve(data); }, opts.waitMs ?? 2000);
  });
}

describe('HTTP core', () => {
  it('survives clients that disconnect in the middle of a body', async () => {
    for (let i = 0; i < 20; i++) {
      await raw(`POST /x-keys HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${gw.rootKey}\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n{"Provider":"https://a`, { destroyAfterWrite: true });
    }
    const r = await gw.root.get('/x-keys');
    expect(r.status).toBe(200);
    expect(r.body).toEqual([]);
  });

  it('reads chunked bodies', async () => {
    const body = JSON.stringify({ Provider: 'https://api.example.com', SecretKey: 'sk-chunked-body-0123456789' });
    const half = Math.floor(body.length / 2);
    const chunk = (s: string) => `${Buffer.byteLength(s).toString(16)}\r\n${s}\r\n`;
    const res = await raw(`POST /x-keys HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${gw.rootKey}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n${chunk(body.slice(0, half))}${chunk(body.slice(half))}0\r\n\r\n`);
    expect(res).toMatch(/^HTTP\/1.1 201/);
    expect(res).toContain('"Action":"add"');
  });

  it('answers 413 for oversized bodies, declared or chunked', async () => {
    const big = JSON.stringify({ Provider: 'https://x.com', SecretKey: 'x'.repeat(100 * 1024) });
    expectEnvelope(await gw.root.request('POST', '/x-keys', { raw: big, headers: { 'content-type': 'application/json' } }), 413);
    const chunk = (s: string) => `${Buffer.byteLength(s).toString(16)}\r\n${s}\r\n`;
    const res = await raw(`POST /x-keys HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${gw.rootKey}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n${chunk(big.slice(0, 40000))}${chunk(big.slice(40000))}0\r\n\r\n`);
    expect(res).toMatch(/^HTTP\/1.1 413/);
    expect((await gw.root.get('/x-keys')).body).toHaveLength(1);
  });

  it('answers unknown paths and methods with a 404 envelope', async () => {
    expectEnvelope(await gw.root.get('/no/such/thing'), 404);
    expectEnvelope(await gw.root.request('PATCH', '/x-keys'), 404);
    expect((await gw.root.request('HEAD', '/healthz')).status).toBe(200);
  });
});
