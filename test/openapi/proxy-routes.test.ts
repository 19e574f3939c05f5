/**
 * The AI proxy's routes as the OpenAPI document describes them, held against the running
 * gateway: the same paths and aliases, and errors in the documented shape on each of them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../contract/openapi/index';
import { BATCH_FILE_OPERATIONS, PROXY_ROUTES as DOCUMENTED, PROXY_TAG } from '../../contract/openapi/proxy';
import { BATCH_ROUTES } from '../../server/gateway/batches/routes';
import { FILE_ROUTES } from '../../server/gateway/files/routes';
import { operations } from '../../contract/openapi/types';
import { PROXY_ROUTES as SERVED } from '../../server/gateway/proxy';
import { STORED_RESPONSE_ROUTES } from '../../server/gateway/routes';
import { startTestGateway, type TestGateway } from '../../server/testing/gateway';
import { multipartBody } from '../../server/testing/multipart';

let gw: TestGateway;
beforeAll(async () => { gw = await startTestGateway(); });
afterAll(async () => { await gw?.close(); });

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${gw.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

/** An upload route's form with only a `stream` field: its model is missing. */
function postForm(path: string, headers: Record<string, string>) {
  const form = multipartBody([{ name: 'stream', value: 'true' }]);
  return fetch(`${gw.url}${path}`, { method: 'POST', headers: { 'content-type': form.type, ...headers }, body: new Uint8Array(form.body) });
}

describe('the AI proxy routes in the OpenAPI document', () => {
  it('are the routes the gateway serves, each alias named in its description', () => {
    const doc = buildOpenApiDocument();
    const batchOrFile = (path: string) => BATCH_FILE_OPERATIONS.some((r) => r.path === path);
    const tagged = [...operations(doc)].filter(({ op, path }) => op.tags?.includes(PROXY_TAG.name) && !batchOrFile(path));
    const canonical = [...new Set(SERVED.map(([, , c]) => c))].sort();
    expect(tagged.filter(({ method }) => method === 'post').map(({ path }) => path).sort()).toEqual(canonical);
    // A stored response's reads and deletion, each with its alias.
    const stored = tagged.filter(({ method }) => method !== 'post').map(({ method, path }) => `${method.toUpperCase()} ${path}`).sort();
    expect(stored).toEqual([...new Set(STORED_RESPONSE_ROUTES.map((r) => `${r.method} ${r.canonical}`))].sort());
    for (const r of STORED_RESPONSE_ROUTES) {
      if (r.path.startsWith('/v1/')) continue;
      expect(doc.paths[r.canonical][r.method.toLowerCase() as 'get' | 'delete']!.description, r.path).toContain(`\`${r.path.replace(':id', '{id}')}\``);
    }
    for (const r of DOCUMENTED) {
      const aliases = SERVED.filter(([p, , c]) => c === r.path && p !== r.path).map(([p]) => p);
      expect(aliases, r.path).toEqual([r.alias]);
      expect(doc.paths[r.path].post!.description, r.path).toContain(`\`${r.alias}\``);
    }
  });

  it('list the Files and batch routes the gateway serves, each alias named in its description', () => {
    const doc = buildOpenApiDocument();
    const served = [...BATCH_ROUTES, ...FILE_ROUTES];
    const documented = BATCH_FILE_OPERATIONS.map((r) => `${r.method.toUpperCase()} ${r.path}`).sort();
    expect(documented).toEqual([...new Set(served.map((r) => `${r.method} ${r.canonical}`))].sort());
    for (const r of served) {
      const op = doc.paths[r.canonical][r.method.toLowerCase() as 'get' | 'post' | 'delete']!;
      expect(op.tags, r.path).toEqual([PROXY_TAG.name]);
      const alias = r.path.replace(':id', '{id}');
      if (alias !== r.canonical) expect(op.description, r.path).toContain(`\`${alias}\``);
      expect(op.parameters!.some((p) => p.name === 'id' && p.in === 'path'), r.path).toBe(r.canonical.includes('{id}'));
    }
  });

  it('answer the Files and batch routes 401 without a key, in the documented error shape', async () => {
    for (const r of [...BATCH_ROUTES, ...FILE_ROUTES]) {
      const path = r.path.replace(':id', 'batch_abc');
      const res = await fetch(`${gw.url}${path}`, { method: r.method });
      expect(res.status, `${r.method} ${path}`).toBe(401);
      const body = await res.json();
      const documented = BATCH_FILE_OPERATIONS.find((o) => o.path === r.canonical && o.method === r.method.toLowerCase())!;
      if (documented.anthropic) expect(body, path).toMatchObject({ type: 'error', error: { type: 'authentication_error', code: 'missing_api_key' } });
      else expect(body, path).toMatchObject({ error: { type: 'authentication_error', code: 'missing_api_key' } });
    }
  });

  it('answer 401 without a key and 400 without a model, in the Error envelope or Anthropic\'s shape on /v1/messages', async () => {
    for (const r of DOCUMENTED) {
      for (const path of [r.path, r.alias]) {
        const anonymous = await post(path, { model: 'gpt-4o-mini' });
        expect(anonymous.status, path).toBe(401);
        const a = await anonymous.json();
        if (r.anthropic) expect(a, path).toMatchObject({ type: 'error', error: { type: 'authentication_error', message: expect.any(String), code: 'missing_api_key', request_id: anonymous.headers.get('x-request-id') } });
        else expect(a, path).toEqual({ error: { message: expect.any(String), type: 'authentication_error', code: 'missing_api_key', request_id: anonymous.headers.get('x-request-id') } });

        const key: Record<string, string> = r.anthropic ? { 'x-api-key': gw.rootKey } : { authorization: `Bearer ${gw.rootKey}` };
        const noModel = r.upload ? await postForm(path, key) : await post(path, { stream: true }, key);
        expect(noModel.status, path).toBe(400);
        const b = await noModel.json();
        expect(b.error.code, path).toBe('invalid_model');
        if (r.anthropic) expect(b.type).toBe('error');
      }
    }
  });
});
