import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../testing/gateway';
import { expectEnvelope } from '../../testing/http';
import { make, rowCounts, type Made } from './test-support';

let gw: TestGateway;
// Root ─┬─ a (Level 2, Gear 3, Tier 4, Factor 1.5) ─┬─ a1 ── a1x
//       │                                           └─ a2
//       └─ b (Level 1) ── b1
let a: Made, b: Made, a1: Made, a2: Made, a1x: Made, b1: Made;

beforeAll(async () => {
  gw = await startTestGateway();
  a = await make(gw, gw.root, { CreditGranted: 100, Level: 2, Gear: 3, Tier: 4, Factor: 1.5, Name: `zeta${process.pid}`, Email: `zeta${process.pid}@z.test` });
  b = await make(gw, gw.root, { CreditGranted: 100, Name: `alpha${process.pid}`, Email: `alpha${process.pid}@a.test` });
  a1 = await make(gw, a.client, { CreditGranted: 30 });
  a2 = await make(gw, a.client, { CreditGranted: 3 });
  a1x = await make(gw, a1.client, { CreditGranted: 3 });
  b1 = await make(gw, b.client, { CreditGranted: 3 });
});
afterAll(async () => { await gw?.close(); });

const ids = (r: { body: { ID: number }[] }) => r.body.map((u) => u.ID);

describe('GET /x-users and /x-dna', () => {
  it('lists direct children only on /x-users and every descendant on /x-dna, never the caller', async () => {
    expect(ids(await a.client.get('/x-users'))).toEqual([a1.id, a2.id]);
    expect(ids(await a.client.get('/x-dna'))).toEqual([a1.id, a2.id, a1x.id]);
    expect(ids(await gw.root.get('/x-users'))).toEqual([a.id, b.id]);
    expect(ids(await gw.root.get('/x-dna'))).toEqual([a.id, b.id, a1.id, a2.id, a1x.id, b1.id]);
    expect(ids(await a1.client.get('/x-dna'))).toEqual([a1x.id]);
    const one = (await a.client.get('/x-users')).body[0];
    expect(one).toMatchObject({ ID: a1.id, DNA: `${a.dna}${a1.id}.`, Children: 1, Balance: 27, ParentID: a.id });
    expect(one.SecretKey).toBeUndefined();
  });

  it('pages with the X-* headers (page 1 when only size is sent) and orders by the documented fields', async () => {
    const p1 = await gw.root.get('/x-dna?size=4');
    expect(ids(p1)).toEqual([a.id, b.id, a1.id, a2.id]);
    expect(Object.fromEntries(['x-total-count', 'x-page', 'x-per-page', 'x-total-pages'].map((h) => [h, p1.headers.get(h)])))
      .toEqual({ 'x-total-count': '6', 'x-page': '1', 'x-per-page': '4', 'x-total-pages': '2' });
    expect(ids(await gw.root.get('/x-dna?size=4&page=2'))).toEqual([a1x.id, b1.id]);
    expect(ids(await gw.root.get('/x-dna?size=4&page=3'))).toEqual([]);
    expect(ids(await gw.root.get('/x-dna?order=-id'))).toEqual([b1.id, a1x.id, a2.id, a1.id, b.id, a.id]);
    expect(ids(await gw.root.get('/x-users?order=name'))).toEqual([b.id, a.id]);
    expect(ids(await gw.root.get('/x-users?order=-name'))).toEqual([a.id, b.id]);
    const byDna = (await gw.root.get('/x-dna?order=dna')).body.map((u: any) => u.DNA);
    expect(byDna).toEqual([...byDna].sort());
    expect(ids(await gw.root.get('/x-users?order=-level'))).toEqual([a.id, b.id]);
    expect(ids(await gw.root.get('/x-users?order=-created'))).toEqual([b.id, a.id]);
  });

  it('filters by id, name, email, level and dna', async () => {
    expect(ids(await gw.root.get(`/x-dna?id=${a2.id}`))).toEqual([a2.id]);
    expect(ids(await gw.root.get(`/x-users?id=${a2.id}`))).toEqual([]);
    expect(ids(await gw.root.get(`/x-dna?name=ZETA`))).toEqual([a.id]);
    expect(ids(await gw.root.get(`/x-dna?email=@a.test`))).toEqual([b.id]);
    expect(ids(await gw.root.get(`/x-dna?name=%25`))).toEqual([]);
    expect(ids(await gw.root.get('/x-dna?level=2'))).toEqual([a.id, a1.id, a2.id, a1x.id]);
    expect(ids(await gw.root.get(`/x-dna?dna=${a1.dna}`))).toEqual([a1.id, a1x.id]);
    expect(ids(await a.client.get(`/x-dna?dna=${b.dna}`))).toEqual([]);
  });

  it('selects by path identifier: ID, username, email, DNA path and the L/G/R/T/F filters', async () => {
    expect(ids(await a.client.get(`/x-users/${a1x.id}`))).toEqual([a1x.id]);
    expect(ids(await a.client.get(`/x-users/${a1x.name}`))).toEqual([a1x.id]);
    expect(ids(await a.client.get(`/x-users/${a1x.email.toUpperCase()}`))).toEqual([a1x.id]);
    expect(ids(await a.client.get(`/x-users/${a1.dna}`))).toEqual([a1.id]);
    expect(ids(await a.client.get(`/x-dna/${a1.dna}`))).toEqual([a1.id, a1x.id]);
    expect(ids(await a.client.get(`/x-dna/${a.dna}`))).toEqual([a1.id, a2.id, a1x.id]);
    expect(ids(await a.client.get(`/x-users/${a.id}`))).toEqual([a.id]);
    expect(ids(await gw.root.get('/x-users/L2'))).toEqual([a.id]);
    expect(ids(await gw.root.get('/x-dna/L2'))).toEqual([a.id, a1.id, a2.id, a1x.id]);
    expect(ids(await gw.root.get('/x-dna/l1'))).toEqual([b.id, b1.id]);
    expect(ids(await gw.root.get('/x-dna/G3'))).toEqual([a.id, a1.id, a2.id, a1x.id]);
    expect(ids(await gw.root.get('/x-dna/T4'))).toEqual([a.id, a1.id, a2.id, a1x.id]);
    expect(ids(await gw.root.get('/x-dna/F1.5'))).toEqual([a.id, a1.id, a2.id, a1x.id]);
    expect(ids(await gw.root.get('/x-dna/F1'))).toEqual([b.id, b1.id]);
    expect(ids(await gw.root.get('/x-dna/R0'))).toHaveLength(6);
    expect(ids(await gw.root.get('/x-dna/R1'))).toEqual([]);
    expect(ids(await a.client.get('/x-users/L2?size=1&page=2'))).toEqual([a2.id]);
  });

  it('answers a subaccount 403 outside its subtree as for the unknown, the Owner 404 for the unknown, 400 for malformed identifiers and queries', async () => {
    const before = await rowCounts(gw);
    const outOfScope = { message: 'Out of scope: you may name only your own account and the accounts below it', type: 'permission_error', code: 'out_of_scope' };
    for (const target of [b.id, b.name, b.email, b.dna, b1.id, '1', 'root', '.1.', '999999', '99999999999', 'nobody-here', 'nobody@example.test', '.1.999999.']) {
      expect(expectEnvelope(await a.client.get(`/x-users/${encodeURIComponent(String(target))}`), 403), String(target)).toEqual(outOfScope);
      expect(expectEnvelope(await a.client.get(`/x-dna/${encodeURIComponent(String(target))}`), 403), String(target)).toEqual(outOfScope);
    }
    expect(expectEnvelope(await a1.client.get(`/x-users/${a2.id}`), 403)).toEqual(outOfScope);
    expect(expectEnvelope(await a1.client.get(`/x-users/${a.id}`), 403)).toEqual(outOfScope);
    // A DNA path below its own names a place in its subtree: an empty one is 404, not out of scope.
    expect(expectEnvelope(await a.client.get(`/x-dna/${a.dna}999999.`), 404)).toEqual({ message: `Account ${a.dna}999999. not found`, type: 'not_found_error', code: 'not_found' });
    for (const target of ['999999', '99999999999', 'nobody-here', 'nobody@example.test', '.1.999999.']) {
      expect(expectEnvelope(await gw.root.get(`/x-users/${target}`), 404).type).toBe('not_found_error');
    }
    for (const target of ['.1.x.', '.1', 'R7', 'L1.5']) expectEnvelope(await gw.root.get(`/x-dna/${target}`), 400);
    for (const q of ['size=0', 'size=1001', 'size=1e9', 'page=0', 'page=x', 'page=1000001', 'page=1e9', 'level=-1', 'level=1001', 'id=abc', 'id=2147483648', 'id=1e30', 'order=balance', 'dna=1.2', 'extra=1']) {
      expect(expectEnvelope(await gw.root.get(`/x-users?${q}`), 400).message, q).toMatch(/\w/);
    }
    expectEnvelope(await gw.root.get('/x-users/L2?order=nope'), 400);
    // The largest page and size accepted read past the end: an empty page, not a long wait.
    expect(ids(await gw.root.get('/x-users?page=1000000&size=1000'))).toEqual([]);
    expectEnvelope(await gw.as(null).get('/x-users'), 401);
    expectEnvelope(await gw.as('sk-Xvs' + 'x'.repeat(45)).get('/x-dna'), 401);
    expect(await rowCounts(gw)).toEqual(before);
  });
});
