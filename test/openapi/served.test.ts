import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../server/testing/gateway';
import { buildOpenApiDocument } from '../../contract/openapi/index';
import { DOCUMENT_FILE, renderDocument, ROOT } from '../../scripts/openapi/generate';

let gw: TestGateway;
beforeAll(async () => { gw = await startTestGateway(); });
afterAll(async () => { await gw?.close(); });

describe('GET /openapi.json', () => {
  it('serves the committed openapi/openapi.json, which is what the contract generates', async () => {
    const res = await fetch(`${gw.url}/openapi.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const served = await res.json();
    const committed = readFileSync(path.join(ROOT, DOCUMENT_FILE), 'utf8');
    // Same content and the same key order; if this fails: npm run openapi && npm run clients.
    expect(renderDocument(served)).toBe(committed);
    expect(renderDocument(buildOpenApiDocument())).toBe(committed);
  });

  it('needs no API key', async () => {
    const res = await fetch(`${gw.url}/openapi.json`, { headers: { authorization: 'Bearer nope' } });
    expect(res.status).toBe(200);
  });
});
