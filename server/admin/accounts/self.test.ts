import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../testing/gateway';
import { expectEnvelope } from '../../testing/http';
import { generateAccountKey, KEY_PATTERN } from '../../adapters/security/crypto';
import { confirmToday, lastLog, make, rowCounts } from './test-support';

let gw: TestGateway;
beforeAll(async () => { gw = await startTestGateway(); });
afterAll(async () => { await gw?.close(); });

describe('POST /x-self', () => {
  it('generates a new key; the old one stops working at once, even while cached', async () => {
    const me = await make(gw, gw.root, { CreditGranted: 3 });
    expect((await me.client.get('/dashboard/status')).status).toBe(200);
    const before = await rowCounts(gw);
    const r = await me.client.post('/x-self', { confirm: confirmToday() });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, message: 'Self key rotated successfully', rotate: { action: 'rotate_self', id: me.id, name: me.name } });
    const key = r.body.rotate.key;
    expect(key).toMatch(KEY_PATTERN);
    expect(key).not.toBe(me.key);
    expect(Math.abs(Date.parse(r.body.rotate.timestamp) - Date.now())).toBeLessThan(60_000);
    expect(expectEnvelope(await me.client.get('/dashboard/status'), 401).code).toBe('invalid_api_key');
    expect((await gw.as(key).get('/dashboard/status')).body.id).toBe(me.id);
    expect(await rowCounts(gw)).toMatchObject({ keys: before.keys, logs: before.logs + 1 });
    const log = await lastLog(gw);
    expect(log).toMatchObject({ action: 'rotate_self', target_id: me.id });
    expect(log.details).not.toContain(key);
    expect(gw.logs.join('\n')).not.toContain(key);
  });

  it('uses a supplied key of the right form, and generates one for a malformed key or the current one', async () => {
    const me = await make(gw, gw.root, { CreditGranted: 3 });
    const chosen = generateAccountKey();
    const r = await me.client.post('/x-self', { confirm: confirmToday(), key: chosen });
    expect(r.body.rotate.key).toBe(chosen);
    const self = gw.as(chosen);
    expect((await self.get('/dashboard/status')).status).toBe(200);

    const malformed = await self.post('/x-self', { confirm: confirmToday(), key: 'sk-Xvs-too-short' });
    expect(malformed.body.rotate.key).toMatch(KEY_PATTERN);
    expect(malformed.body.rotate.key).not.toBe('sk-Xvs-too-short');
    const current = gw.as(malformed.body.rotate.key);
    const same = await current.post('/x-self', { confirm: confirmToday(), key: malformed.body.rotate.key });
    expect(same.body.rotate.key).not.toBe(malformed.body.rotate.key);
    expectEnvelope(await current.get('/dashboard/status'), 401);
  });

  it('refuses a key in use by another account (409), a wrong confirmation and bad bodies (400), writing nothing', async () => {
    const me = await make(gw, gw.root, { CreditGranted: 3 });
    const other = await make(gw, gw.root, { CreditGranted: 3 });
    const before = await rowCounts(gw);
    expect(expectEnvelope(await me.client.post('/x-self', { confirm: confirmToday(), key: other.key }), 409).code).toBe('key_in_use');
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    const cases: [unknown, RegExp][] = [
      [{ confirm: `${yesterday}-ROTATE-SELF` }, /confirm: must be "\d{4}-\d{2}-\d{2}-ROTATE-SELF"/],
      [{ confirm: confirmToday().toLowerCase() }, /confirm/],
      [{ confirm: `${confirmToday().slice(0, 10)}-ROTATE-ROOT` }, /confirm/],
      [{}, /confirm/],
      [{ confirm: 20260101 }, /confirm/],
      [{ confirm: confirmToday(), key: 42 }, /key/],
      [{ confirm: confirmToday(), name: 'x' }, /unknown field: name/],
    ];
    for (const [body, message] of cases) expect(expectEnvelope(await me.client.post('/x-self', body), 400).message, JSON.stringify(body)).toMatch(message);
    expectEnvelope(await me.client.request('POST', '/x-self', { raw: '{"confirm"', headers: { 'content-type': 'application/json' } }), 400);
    expectEnvelope(await gw.as(null).post('/x-self', { confirm: confirmToday() }), 401);
    expect(await rowCounts(gw)).toEqual(before);
    expect((await me.client.get('/dashboard/status')).status).toBe(200);
  });

  it('is open to an account without manage permission, so a leaked key can always be revoked', async () => {
    const poor = await make(gw, gw.root, { CreditGranted: 2 });
    await gw.root.put(`/x-users/${poor.id}`, { Suspended: true });
    expect((await poor.client.get('/dashboard/status')).body.manage).toBe(false);
    expect((await poor.client.post('/x-self', { confirm: confirmToday() })).status).toBe(200);
  });
});

describe('GET /dashboard/status', () => {
  it('reports identity, balance, the thresholds and the manage verdict the endpoints apply', async () => {
    const root = await gw.root.get('/dashboard/status');
    expect(root.body).toEqual({
      object: 'user_status', id: 1, dna: '.1.', name: 'root', email: 'root@localhost', alias: expect.any(String),
      manage: true, admin: true, balance: 0, user_api_balance: 20, user_min_balance: 2, suspended: false,
    });
    const rich = await make(gw, gw.root, { CreditGranted: 20, Alias: 'Rich' });
    expect((await rich.client.get('/dashboard/status')).body).toMatchObject({ id: rich.id, dna: rich.dna, alias: 'Rich', manage: true, admin: false, balance: 20 });
    await gw.root.put(`/x-users/${rich.id}`, { CreditGranted: -0.01 });
    expect((await rich.client.get('/dashboard/status')).body).toMatchObject({ manage: false, balance: 19.99 });
    expectEnvelope(await rich.client.get('/x-dna'), 403);
    expectEnvelope(await rich.client.get('/dashboard/status?x=1'), 400);
    expectEnvelope(await gw.as(null).get('/dashboard/status'), 401);
  });
});
