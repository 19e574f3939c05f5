import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import net from 'node:net';
import { startTestGateway, type TestGateway } from '../../testing/gateway';
import { expectEnvelope, type HttpClient } from '../../testing/http';

/** The admin API's intake over real HTTP: routes, HEAD, query strings, and text the database cannot store. */
let gw: TestGateway;
beforeAll(async () => { gw = await startTestGateway(); });
afterAll(async () => { await gw?.close(); });

/**
 * Two requests on one connection, the second sent once the first answer began (uWS does not
 * serve a request pipelined behind one still pending); returns all bytes read until the
 * server closes the connection or `waitMs` passes.
 */
function oneAfterAnother(first: string, second: string, waitMs = 2000): Promise<string> {
  const { port } = new URL(gw.url);
  return new Promise((resolve) => {
    let data = '';
    const socket = net.connect(Number(port), '127.0.0.1', () => socket.write(first));
    socket.once('data', () => setTimeout(() => socket.write(second), 100));
    socket.on('data', (d) => (data += d));
    socket.on('close', () => resolve(data));
    socket.on('error', () => resolve(data));
    setTimeout(() => { socket.destroy(); resolve(data); }, waitMs);
  });
}

describe('routes', () => {
  it('sends GET / to the console', async () => {
    for (const method of ['GET', 'HEAD']) {
      const r = await fetch(`${gw.url}/`, { method, redirect: 'manual' });
      expect(r.status).toBe(302);
      expect(r.headers.get('location')).toBe('/console/');
    }
  });

  it('answers HEAD as GET would, without the body', async () => {
    const key = `Authorization: Bearer ${gw.rootKey}\r\n`;
    const cases: [string, string, number][] = [
      ['/healthz', '', 200],
      ['/no/such/thing', '', 404],
      ['/no/such/thing', key, 404],
      ['/x-keys', '', 401],
      ['/x-keys', key, 200],
      ['/openapi.json', '', 200],
      ['/dashboard/info', '', 401],
      ['/v1/chat/completions', '', 404],
      ['/trpc/keys.list', '', 401],
    ];
    for (const [path, auth, status] of cases) {
      const get = await fetch(gw.url + path, { headers: auth ? { authorization: auth.slice(15, -2) } : {} });
      const getBody = Buffer.from(await get.arrayBuffer());
      expect(get.status, `GET ${path}`).toBe(status);
      // HEAD, then GET on the same connection: a body after the HEAD answer would be read as
      // the second answer's start.
      const both = await oneAfterAnother(`HEAD ${path} HTTP/1.1\r\nHost: x\r\n${auth}\r\n`, `GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      const [head, rest] = [both.slice(0, both.indexOf('\r\n\r\n') + 4), both.slice(both.indexOf('\r\n\r\n') + 4)];
      expect(head, `HEAD ${path}`).toMatch(new RegExp(`^HTTP/1.1 ${status} `));
      expect(head.toLowerCase()).toContain(`content-length: ${getBody.length}\r\n`);
      expect(rest, `HEAD ${path}`).toMatch(/^HTTP\/1.1 200 OK\r\n[\s\S]*\r\n\r\n\{"status":"ok"\}$/);
    }
  });
});

describe('query strings', () => {
  const names = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', 'isPrototypeOf'];
  const gets = ['/x-keys', '/x-keys/1', '/x-users', '/x-config', '/x-conf', '/dashboard/logs', '/dashboard/news', '/dashboard/info', '/x-bill', '/healthz', '/no/such'];
  const deletes = ['/x-config', '/x-news', '/x-keys/99', '/x-users/nobody'];

  it('never answers 500 to a parameter named after an object-prototype property', async () => {
    for (const client of [gw.root, gw.as(null)] as HttpClient[]) {
      for (const name of names) {
        for (const q of [`${name}=1`, `${name}=1&${name}=2`, `${name}`, `a=1&${name}[]=x`]) {
          for (const [method, paths] of [['GET', gets], ['DELETE', deletes]] as const) {
            for (const path of paths) {
              const r = await client.request(method, `${path}?${q}`);
              expect(r.status, `${method} ${path}?${q} ${client.key ? 'root' : 'no key'}: ${r.text}`).toBeLessThan(500);
              if (r.status >= 400) expectEnvelope(r, r.status);
            }
          }
          const r = await client.request('GET', `/trpc/keys.list?${q}`);
          expect(r.status, `tRPC ?${q}`).toBeLessThan(500);
        }
      }
    }
  });

  it('refuses unknown parameters of a strict route, prototype names included', async () => {
    expect(expectEnvelope(await gw.root.get('/dashboard/info?constructor=1'), 400).message).toMatch(/constructor/);
    expect(expectEnvelope(await gw.root.get('/dashboard/info?toString=1'), 400).message).toMatch(/toString/);
  });

  it('reads a repeated parameter as a list, and a DELETE body joins the query', async () => {
    for (const key of ['XAI_MAIL', 'LEVEL_MAPPER']) { const put = await gw.root.put('/x-config', { [key]: key === 'XAI_MAIL' ? 'ops@example.com' : 'gpt-4o=2' }); expect(put.status, put.text).toBe(200); }
    const r = await gw.root.request('DELETE', '/x-config?keys=XAI_MAIL&keys=LEVEL_MAPPER');
    expect(r.status, r.text).toBe(200);
    const config = (await gw.root.get('/x-config')).body;
    expect(config.XAI_MAIL ?? '').toBe('');
    expect((await gw.root.put('/x-config', { XAI_MAIL: 'ops@example.com' })).status).toBe(200);
    expect((await gw.root.delete('/x-config', { keys: ['XAI_MAIL'] })).status).toBe(200);
    expect(expectEnvelope(await gw.root.delete('/x-config', { keys: ['NOPE'] }), 400).message).toMatch(/keys/);
  });
});

describe('text the database cannot store', () => {
  const nulQueries = ['/x-users?name=a%00b', '/x-users?email=%00', '/x-keys?provider=x%00', '/dashboard/logs?user=%00', '/dashboard/logs?action=%00', '/x-keys?a%00b=1'];

  it('refuses a NUL in a query key or value, with or without a key, naming the parameter', async () => {
    for (const path of nulQueries) {
      for (const client of [gw.root, gw.as(null)] as HttpClient[]) {
        const e = expectEnvelope(await client.get(path), 400);
        expect(e.code).toBe('invalid_request');
        expect(e.message).toMatch(/^(name|email|provider|user|action|a\u0000b): must not contain NUL characters$/);
      }
    }
  });

  it('refuses a NUL in a decoded path', async () => {
    for (const [method, path] of [['GET', '/x-keys/%00'], ['GET', '/x-users/a%00'], ['DELETE', '/x-keys/%00'], ['DELETE', '/x-news/%00'], ['GET', '/x-ekey/a%00b']] as const) {
      const e = expectEnvelope(await gw.root.request(method, path), 400);
      expect(e.message).toBe('path: must not contain NUL characters');
    }
    // A malformed escape is left for the route to judge, as before.
    expect((await gw.root.get('/x-keys/%E0%A4%A')).status).toBeLessThan(500);
  });

  it('refuses a NUL or a lone surrogate in a body string or object key, naming the field', async () => {
    const raw = (method: string, path: string, json: string) => gw.root.request(method, path, { raw: json, headers: { 'content-type': 'application/json' } });
    const cases: [string, string, string, string][] = [
      ['POST', '/x-news', '{"title":"t\\u0000","content":"c"}', 'title: must not contain NUL characters'],
      ['POST', '/x-news', '{"title":"t","content":"\\ud800"}', 'content: must not contain unpaired UTF-16 surrogates'],
      ['POST', '/x-keys', '{"Provider":"https://api.example.com","SecretKey":"sk-0123456789abcdefghij","Name":"a\\u0000"}', 'Name: must not contain NUL characters'],
      ['POST', '/x-keys', '{"Provider":"azure","SecretKey":"sk-0123456789abcdefghij","deployments":{"gpt\\u0000":"d"}}', 'deployments.gpt\u0000: must not contain NUL characters'],
      ['PUT', '/x-config', '{"MODEL_LIMITS":"{}","ModelLimits":{"gpt\\u0000":{"rpm":1}}}', 'ModelLimits.gpt\u0000: must not contain NUL characters'],
      ['POST', '/x-users', '{"Name":"n","Alias":"\\u0000"}', 'Alias: must not contain NUL characters'],
      ['DELETE', '/x-config', '{"keys":["XAI_MAIL\\u0000"]}', 'keys.0: must not contain NUL characters'],
    ];
    for (const [method, path, json, message] of cases) {
      const e = expectEnvelope(await raw(method, path, json), 400);
      expect([e.code, e.message], `${method} ${path}`).toEqual(['invalid_request', message]);
    }
    expect((await gw.root.get('/x-keys')).body).toEqual([]);
  });

  it('refuses the same over tRPC, in a query input and in a (batched) body', async () => {
    const auth = { authorization: `Bearer ${gw.rootKey}`, 'content-type': 'application/json' };
    const input = encodeURIComponent(JSON.stringify({ 0: { provider: 'x\u0000' } }));
    let r = await fetch(`${gw.url}/trpc/keys.list?batch=1&input=${input}`, { headers: auth });
    expect(r.status).toBe(400);
    expect((await r.json()).error.message).toBe('provider: must not contain NUL characters');
    r = await fetch(`${gw.url}/trpc/news.create?batch=1`, { method: 'POST', headers: auth, body: JSON.stringify({ 0: { title: 't\u0000', content: 'c' } }) });
    expect(r.status).toBe(400);
    expect((await r.json()).error.message).toBe('title: must not contain NUL characters');
    r = await fetch(`${gw.url}/trpc/keys.list?constructor=%00`, { headers: auth });
    expect(r.status).toBe(400);
  });
});
