/**
 * The call headers the OpenAPI document promises on the AI proxy routes, held against the
 * running gateway: `X-Request-Id` (the client's when usable, else generated) and `Server-Timing`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../contract/openapi/index';
import { CALL_HEADERS, CLIENT_REQUEST_ID_MAX, CLIENT_REQUEST_ID_PATTERN, PROXY_ROUTES } from '../../contract/openapi/proxy';
import { MAX_CLIENT_REQUEST_ID } from '../../server/gateway/request-id';
import { startTestGateway, type TestGateway } from '../../server/testing/gateway';

let gw: TestGateway;
beforeAll(async () => { gw = await startTestGateway(); });
afterAll(async () => { await gw?.close(); });

const post = (path: string, headers: Record<string, string>) =>
  fetch(`${gw.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ model: 'gpt-4o-mini' }) });

describe('call headers of the AI proxy routes', () => {
  it('are documented on every answer, and X-Request-Id as an optional request header', () => {
    const doc = buildOpenApiDocument();
    for (const r of PROXY_ROUTES) {
      const op = doc.paths[r.path].post!;
      for (const [status, response] of Object.entries(op.responses)) {
        expect(Object.keys(response.headers ?? {}), `${r.path} ${status}`).toEqual(expect.arrayContaining(Object.keys(CALL_HEADERS)));
      }
      expect(op.parameters, r.path).toEqual([expect.objectContaining({ name: 'X-Request-Id', in: 'header', required: false })]);
    }
    expect(CLIENT_REQUEST_ID_MAX).toBe(MAX_CLIENT_REQUEST_ID);
  });

  it('are what the gateway sends: a usable client ID echoed, any other replaced, the gateway time as gateway;dur', async () => {
    const pattern = new RegExp(CLIENT_REQUEST_ID_PATTERN);
    const usable = ['a', 'checkout-7f3a2b', 'x'.repeat(CLIENT_REQUEST_ID_MAX), '0af7651916cd43dd8448eb211c80319c', 'u@h:1+2=3_4.5'];
    const unusable = ['x'.repeat(CLIENT_REQUEST_ID_MAX + 1), 'has space', 'semi;colon', 'quote"', 'é'];
    for (const r of PROXY_ROUTES) {
      for (const id of usable) {
        expect(pattern.test(id), id).toBe(true);
        const res = await post(r.path, { 'x-request-id': id });
        expect(res.status, r.path).toBe(401);
        expect(res.headers.get('x-request-id'), `${r.path} ${id}`).toBe(id);
        expect(res.headers.get('server-timing'), r.path).toMatch(/^gateway;dur=\d+\.\d{2}$/);
        await res.body?.cancel();
      }
      for (const id of unusable) {
        expect(id.length > CLIENT_REQUEST_ID_MAX || !pattern.test(id), id).toBe(true);
        // fetch refuses non-Latin-1 header values; send the UTF-8 bytes as the header's Latin-1 form.
        const value = /^[\x20-\x7e]*$/.test(id) ? id : Buffer.from(id, 'utf8').toString('latin1');
        const res = await post(r.path, { 'x-request-id': value });
        expect(res.status, r.path).toBe(401);
        const generated = res.headers.get('x-request-id');
        expect(generated, `${r.path} ${id}`).toMatch(pattern);
        expect(generated).not.toBe(id);
        expect(res.headers.get('server-timing'), r.path).toMatch(/^gateway;dur=\d+\.\d{2}$/);
        await res.body?.cancel();
      }
      const none = await post(r.path, {});
      expect(none.headers.get('x-request-id'), r.path).toMatch(pattern);
      await none.body?.cancel();
    }
  });
});
