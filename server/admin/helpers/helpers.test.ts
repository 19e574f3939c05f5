import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../testing/gateway';
import { expectEnvelope } from '../../testing/http';
import { KEY_PATTERN } from '../../adapters/security/crypto';

let gw: TestGateway;
beforeAll(async () => { gw = await startTestGateway(); });
afterAll(async () => { await gw?.close(); });

describe('helpers', () => {
  it('/x-gkey generates keys in the service format', async () => {
    const a = await gw.root.get('/x-gkey');
    const b = await gw.root.get('/x-gkey');
    expect(a.status).toBe(200);
    expect(a.body.key).toMatch(KEY_PATTERN);
    expect(a.body.key).toHaveLength(51);
    expect(a.body.key).not.toBe(b.body.key);
  });

  it('/x-ekey and /x-dkey round-trip, including URL-encoded text', async () => {
    const text = 'hello wörld/+?&';
    const enc = await gw.root.get(`/x-ekey/${encodeURIComponent(text)}`);
    expect(enc.status).toBe(200);
    expect(enc.body.encrypted).toMatch(/^v1\./);
    expect(enc.body.encrypted).not.toContain('hello');
    const dec = await gw.root.get(`/x-dkey/${encodeURIComponent(enc.body.encrypted)}`);
    expect(dec.body).toEqual({ success: true, decrypted: text });
    // Same text, new nonce: two different ciphertexts.
    expect((await gw.root.get(`/x-ekey/${encodeURIComponent(text)}`)).body.encrypted).not.toBe(enc.body.encrypted);
  });

  it('rejects a tampered or foreign ciphertext with 400', async () => {
    const enc = (await gw.root.get('/x-ekey/secret')).body.encrypted as string;
    // A character in the middle: the last one may carry only padding bits, which decoding ignores.
    const at = Math.floor(enc.length / 2);
    const tampered = enc.slice(0, at) + (enc[at] === 'A' ? 'B' : 'A') + enc.slice(at + 1);
    expectEnvelope(await gw.root.get(`/x-dkey/${encodeURIComponent(tampered)}`), 400);
    expectEnvelope(await gw.root.get('/x-dkey/not-a-ciphertext'), 400);
  });

  it('requires an Owner key', async () => {
    expectEnvelope(await gw.as(null).get('/x-gkey'), 401);
    expectEnvelope(await gw.as('sk-Xvs' + 'x'.repeat(45)).get('/x-ekey/abc'), 401);
    expectEnvelope(await gw.root.request('GET', '/x-gkey', { headers: { authorization: 'Basic abc' } }), 401);
  });
});
