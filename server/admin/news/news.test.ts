import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../testing/gateway';
import { expectEnvelope } from '../../testing/http';
import { lastLog, make, rowCounts, type Made } from '../accounts/test-support';
import { pathsAbove } from './service';

let gw: TestGateway;
// Root ─┬─ a ─┬─ a1 ── a1x
//       │     └─ a2
//       └─ b
let a: Made, a1: Made, a1x: Made, a2: Made, b: Made;

beforeAll(async () => {
  gw = await startTestGateway();
  a = await make(gw, gw.root, { CreditGranted: 100 });
  a1 = await make(gw, a.client, { CreditGranted: 30 });
  a1x = await make(gw, a1.client, { CreditGranted: 3 });
  a2 = await make(gw, a.client, { CreditGranted: 3 });
  b = await make(gw, gw.root, { CreditGranted: 30 });
});
afterAll(async () => { await gw?.close(); });

const DAY = 86_400_000;
const feed = async (who: Made | 'root') => (await (who === 'root' ? gw.root : who.client).get('/dashboard/news')).body;
const titles = (list: { title: string }[]) => list.map((n) => n.title).sort();

describe('POST /x-news', () => {
  it('posts system-wide news (Root only), 7 days by default, seen by every account', async () => {
    const r = await gw.root.post('/x-news', { title: 'Maintenance', content: 'Tonight at 22:00 UTC' });
    expect(r.status).toBe(201);
    expect(r.body.success).toBe(true);
    const n = r.body.news;
    expect(n).toMatchObject({ scope: 'system', title: 'Maintenance', content: 'Tonight at 22:00 UTC', author_id: 1, target_id: null, target_dna: null });
    expect(Date.parse(n.expires_at) - Date.parse(n.created_at)).toBe(7 * DAY);
    expect(await lastLog(gw)).toMatchObject({ action: 'add_news' });
    for (const who of [a, a1x, b] as const) expect(titles((await feed(who)).sys_news)).toContain('Maintenance');
    const before = await rowCounts(gw);
    expect(expectEnvelope(await a.client.post('/x-news', { title: 't', content: 'c' }), 403).code).toBe('root_only');
    expect(await rowCounts(gw)).toEqual(before);
  });

  it('posts targeted news by ID, username or DNA path (32 days by default) to ancestors\' targets only', async () => {
    const byId = await a.client.post(`/x-news/${a1.id}`, { title: 'For a1', content: 'c', days: 3 });
    expect(byId.status).toBe(201);
    expect(byId.body.news).toMatchObject({ scope: 'user', target_id: a1.id, target_dna: null, author_id: a.id });
    expect(Date.parse(byId.body.news.expires_at) - Date.parse(byId.body.news.created_at)).toBe(3 * DAY);
    const byName = await gw.root.post(`/x-news/${a1x.name}`, { title: 'For a1x', content: 'c' });
    expect(byName.body.news).toMatchObject({ scope: 'user', target_id: a1x.id });
    expect(Date.parse(byName.body.news.expires_at) - Date.parse(byName.body.news.created_at)).toBe(32 * DAY);
    const bySubtree = await a.client.post(`/x-news/${a1.dna}`, { title: 'For the a1 tree', content: 'c' });
    expect(bySubtree.body.news).toMatchObject({ scope: 'dna', target_id: null, target_dna: a1.dna });
    // Its own DNA path addresses its own subtree.
    expect((await a.client.post(`/x-news/${a.dna}`, { title: 'For the a tree', content: 'c' })).status).toBe(201);

    const before = await rowCounts(gw);
    // Above or beside a subaccount is out of scope, exactly as an account nobody has; itself by ID is no ancestor's target.
    const outOfScope = expectEnvelope(await a.client.post('/x-news/999999', { title: 't', content: 'c' }), 403);
    expect(outOfScope.code).toBe('out_of_scope');
    for (const target of [a.id, a2.id]) expect(expectEnvelope(await a1.client.post(`/x-news/${target}`, { title: 't', content: 'c' }), 403)).toEqual(outOfScope);
    for (const target of [b.id, b.dna, b.name, '.1.', '1', 'root', '.1.999999.']) {
      expect(expectEnvelope(await a.client.post(`/x-news/${target}`, { title: 't', content: 'c' }), 403), String(target)).toEqual(outOfScope);
    }
    expect(expectEnvelope(await a.client.post(`/x-news/${a.id}`, { title: 't', content: 'c' }), 403).code).toBe('forbidden');
    // Below its own DNA path nothing is hidden from it: nobody there is 404.
    expect(expectEnvelope(await a.client.post(`/x-news/${a.dna}999999.`, { title: 't', content: 'c' }), 404).message).toBe(`Account ${a.dna}999999. not found`);
    expectEnvelope(await gw.root.post('/x-news/999999', { title: 't', content: 'c' }), 404);
    expectEnvelope(await a.client.post('/x-news/L1', { title: 't', content: 'c' }), 400);
    expect(await rowCounts(gw)).toEqual(before);
  });

  it('answers bad bodies with a 400 envelope, and writes nothing', async () => {
    const before = await rowCounts(gw);
    const cases: [unknown, RegExp][] = [
      [{ content: 'c' }, /title/],
      [{ title: 't' }, /content/],
      [{ title: 'x'.repeat(101), content: 'c' }, /title: must be at most 100/],
      [{ title: 't', content: 'x'.repeat(1001) }, /content: must be at most 1000/],
      [{ title: '   ', content: 'c' }, /title: must not be empty/],
      [{ title: 't', content: 'c', days: 0 }, /days/],
      [{ title: 't', content: 'c', days: 1.5 }, /days/],
      [{ title: 't', content: 'c', days: '3' }, /days/],
      [{ title: 't', content: 'c', days: 3651 }, /days/],
      [{ title: 't', content: 'c', days: 1e9 }, /days/],
      [{ title: 't', content: 'c', days: -1 }, /days/],
      [{ title: 5, content: 'c' }, /title/],
      [{ title: 't', content: 'c', scope: 'x' }, /unknown field: scope/],
    ];
    for (const [body, message] of cases) {
      expect(expectEnvelope(await gw.root.post('/x-news', body), 400).message, JSON.stringify(body)).toMatch(message);
      expectEnvelope(await gw.root.post(`/x-news/${a.id}`, body), 400);
    }
    expectEnvelope(await gw.root.request('POST', '/x-news', { raw: '{"title"', headers: { 'content-type': 'application/json' } }), 400);
    expect((await gw.root.post('/x-news', { title: 'x'.repeat(100), content: 'y'.repeat(1000) })).status).toBe(201);
    expect((await rowCounts(gw)).news).toBe(before.news + 1);
  });
});

describe('GET /dashboard/news', () => {
  it('shows each account its own, its subtrees\' and the system news, unexpired only', async () => {
    expect(titles((await feed(a1)).user_news)).toEqual(['For a1']);
    expect(titles((await feed(a1)).dna_news)).toEqual(['For the a tree', 'For the a1 tree']);
    expect(titles((await feed(a1x)).user_news)).toEqual(['For a1x']);
    expect(titles((await feed(a1x)).dna_news)).toEqual(['For the a tree', 'For the a1 tree']);
    expect(titles((await feed(a2)).dna_news)).toEqual(['For the a tree']);
    expect((await feed(a2)).user_news).toEqual([]);
    expect((await feed(b)).dna_news).toEqual([]);
    expect((await feed(a)).dna_news.map((n: any) => n.title)).toEqual(['For the a tree']);

    await gw.gateway.database.rows(sql`update news set expires_at = now() - interval '1 second' where title = 'For a1'`);
    expect((await feed(a1)).user_news).toEqual([]);
    expectEnvelope(await a1.client.get('/dashboard/news?all=1'), 400);
    expectEnvelope(await gw.as(null).get('/dashboard/news'), 401);
  });

  it('derives the ancestor paths from the DNA path', () => {
    expect(pathsAbove('.1.42.7.')).toEqual(['.1.', '.1.42.', '.1.42.7.']);
  });
});

describe('DELETE /x-news', () => {
  it('removes a target\'s news written by the caller or below it; Root removes anything', async () => {
    await gw.root.post(`/x-news/${a2.id}`, { title: 'Root to a2', content: 'c' });
    await a.client.post(`/x-news/${a2.id}`, { title: 'a to a2', content: 'c' });
    const mine = await a.client.delete(`/x-news/${a2.id}`);
    expect(mine.body).toEqual({ success: true, deleted: 1 });
    expect(await lastLog(gw)).toMatchObject({ action: 'delete_news', target_id: a2.id });
    expect(titles((await feed(a2)).user_news)).toEqual(['Root to a2']);
    expect((await gw.root.delete(`/x-news/${a2.name}`)).body.deleted).toBe(1);

    // A subtree: its DNA news and the news of every account in it (a's expired entry for a1 too).
    const subtree = await a.client.delete(`/x-news/${a1.dna}`);
    expect(subtree.body.deleted).toBe(2);
    expect((await feed(a1x)).dna_news.map((n: any) => n.title)).toEqual(['For the a tree']);
    expect((await feed(a1x)).user_news.map((n: any) => n.title)).toEqual(['For a1x']);
    expect((await gw.root.delete(`/x-news/${a1.dna}`)).body.deleted).toBe(1);
    expect((await feed(a1x)).user_news).toEqual([]);
  });

  it('removes every system-wide entry (Root only), and refuses others without writing', async () => {
    const before = await rowCounts(gw);
    expectEnvelope(await a.client.delete('/x-news'), 403);
    expect(expectEnvelope(await a1.client.delete(`/x-news/${a.id}`), 403).code).toBe('out_of_scope');
    expect(expectEnvelope(await a.client.delete(`/x-news/${b.id}`), 403).code).toBe('out_of_scope');
    expectEnvelope(await gw.root.delete('/x-news/999999'), 404);
    expectEnvelope(await gw.root.delete('/x-news/.1.x.'), 400);
    expect(await rowCounts(gw)).toEqual(before);
    const r = await gw.root.delete('/x-news');
    expect(r.body.deleted).toBeGreaterThanOrEqual(2);
    expect((await feed(a)).sys_news).toEqual([]);
  });
});
