import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../testing/gateway';
import { expectEnvelope } from '../../testing/http';

const SECRET = 'sk-proj-abcdefghijklmnopqrstuvwxyz0123456789';
let gw: TestGateway;

beforeAll(async () => { gw = await startTestGateway(); });
afterAll(async () => { await gw?.close(); });

const keyCount = async () => Number((await gw.root.get('/x-keys')).headers.get('x-total-count'));
const logCount = async () => (await gw.gateway.database.rows<{ n: number }>(sqlCount)).map((r) => Number(r.n))[0];
import { sql } from 'drizzle-orm';
const sqlCount = sql`select count(*)::int as n from operation_logs`;

describe('POST /x-keys', () => {
  it('creates a key, disabled when Status is omitted, and never returns the SecretKey', async () => {
    const r = await gw.root.post('/x-keys', { Name: 'main', Level: 3, Provider: 'https://api.example.com/', SecretKey: SECRET });
    expect(r.status).toBe(201);
    expect(r.body.Action).toBe('add');
    expect(r.body.Key).toMatchObject({ Name: 'main', Level: 3, Provider: 'https://api.example.com', Status: false, config: { provider_type: 'standard' }, SecretHint: '6789' });
    expect(r.text).not.toContain(SECRET);
    expect(r.body.LevelMapper).toBeNull();
  });

  it('completes LEVEL_MAPPER for a standard provider of a known model family, once', async () => {
    const a = await gw.root.post('/x-keys', { Level: 2, Provider: 'https://api.anthropic.com', SecretKey: SECRET, Status: true });
    expect(a.body.LevelMapper).toBe('claude-*=2');
    const b = await gw.root.post('/x-keys', { Level: 5, Provider: 'https://api.anthropic.com', SecretKey: SECRET, Status: true });
    expect(b.body.LevelMapper).toBeNull();
    const conf = await gw.root.get('/x-conf');
    expect(conf.body.LevelMapper).toEqual({ 'claude-*': 2 });
  });

  it('validates the three provider kinds', async () => {
    const azure = await gw.root.post('/x-keys', {
      Level: 4, Provider: 'https://my.openai.azure.com', SecretKey: SECRET, Status: true,
      config: { provider_type: 'azure', deployments: { 'gpt-4o': 'prod-4o' }, api_versions: { 'gpt-4o': '2024-10-21' } },
    });
    expect(azure.status).toBe(201);
    expect(azure.body.Key.config).toEqual({ provider_type: 'azure', deployments: { 'gpt-4o': 'prod-4o' }, api_versions: { 'gpt-4o': '2024-10-21' } });
    expectEnvelope(await gw.root.post('/x-keys', { Provider: 'https://x.azure.com', SecretKey: SECRET, config: { provider_type: 'azure', deployments: {} } }), 400);

    const pem = '-----BEGIN PRIVATE KEY-----\nMIIBVQIBADANBgkqhkiG9w0BAQEFAASCAT8wggE7AgEAAkEA\n-----END PRIVATE KEY-----';
    const vertex = await gw.root.post('/x-keys', {
      Level: 6, Provider: 'https://us-central1-aiplatform.googleapis.com', SecretKey: SECRET,
      config: { provider_type: 'vertex', base_url: 'https://oauth2.googleapis.com', project_id: 'proj-1', client_email: 'svc@proj-1.iam.gserviceaccount.com', private_key: pem },
    });
    expect(vertex.status).toBe(201);
    expect(vertex.body.Key.config).toEqual({ provider_type: 'vertex', base_url: 'https://oauth2.googleapis.com', project_id: 'proj-1', client_email: 'svc@proj-1.iam.gserviceaccount.com', private_key_set: true });
    expect(vertex.text).not.toContain('MIIBVQ');
    const missing = await gw.root.post('/x-keys', { Provider: 'https://x.googleapis.com', SecretKey: SECRET, config: { provider_type: 'vertex', project_id: 'p' } });
    expect(expectEnvelope(missing, 400).message).toMatch(/config/);
    expectEnvelope(await gw.root.post('/x-keys', { Provider: 'https://x.com', SecretKey: SECRET, config: { provider_type: 'bedrock' } }), 400);
  });

  it('answers bad input with a 400 envelope naming the field, and writes nothing', async () => {
    const before = { keys: await keyCount(), logs: await logCount() };
    const cases: [unknown, RegExp][] = [
      [{ SecretKey: SECRET }, /Provider/],
      [{ Provider: 'not a url', SecretKey: SECRET }, /Provider/],
      [{ Provider: 'ftp://x.com', SecretKey: SECRET }, /Provider/],
      [{ Provider: 'https://x.com', SecretKey: 'short' }, /SecretKey: must be at least 20/],
      [{ Provider: 'https://x.com' }, /SecretKey/],
      [{ Provider: 'https://x.com', SecretKey: SECRET, Status: 'false' }, /Status/],
      [{ Provider: 'https://x.com', SecretKey: SECRET, Level: '2' }, /Level/],
      [{ Provider: 'https://x.com', SecretKey: SECRET, Level: -1 }, /Level/],
      [{ Provider: 'https://x.com', SecretKey: SECRET, Level: 1.5 }, /Level/],
      [{ Provider: 'https://x.com', SecretKey: SECRET, Extra: 1 }, /unknown field: Extra/],
      [{ Provider: 'https://x.com', SecretKey: 12345678901234567890 }, /SecretKey/],
      [[], /body/],
      ['text', /body/],
    ];
    for (const [body, message] of cases) {
      const e = expectEnvelope(await gw.root.post('/x-keys', body), 400);
      expect(e.message, JSON.stringify(body)).toMatch(message);
    }
    expectEnvelope(await gw.root.request('POST', '/x-keys', { raw: '{"Provider":', headers: { 'content-type': 'application/json' } }), 400);
    expectEnvelope(await gw.root.request('POST', '/x-keys', { raw: 'Provider=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } }), 415);
    expectEnvelope(await gw.root.request('POST', '/x-keys', { raw: '' }), 400);
    const huge = JSON.stringify({ Provider: 'https://x.com', SecretKey: 'x'.repeat(5 * 1024 * 1024) });
    expectEnvelope(await gw.root.request('POST', '/x-keys', { raw: huge, headers: { 'content-type': 'application/json' } }), 413);
    expect({ keys: await keyCount(), logs: await logCount() }).toEqual(before);
  });
});

describe('GET /x-keys', () => {
  it('filters by query and by path, with pagination headers', async () => {
    const all = await gw.root.get('/x-keys');
    expect(all.status).toBe(200);
    const total = Number(all.headers.get('x-total-count'));
    expect(total).toBe(all.body.length);

    const page = await gw.root.get('/x-keys?size=2');
    expect(page.body).toHaveLength(2);
    expect(page.headers.get('x-page')).toBe('1');
    expect(page.headers.get('x-per-page')).toBe('2');
    expect(page.headers.get('x-total-pages')).toBe(String(Math.ceil(total / 2)));
    const page2 = await gw.root.get('/x-keys?size=2&page=2');
    expect(page2.body[0].ID).not.toBe(page.body[0].ID);

    const byLevelQuery = await gw.root.get('/x-keys?level=2');
    const byLevelPath = await gw.root.get('/x-keys/L2');
    expect(byLevelPath.body).toEqual(byLevelQuery.body);
    expect(byLevelPath.body.every((k: any) => k.Level === 2)).toBe(true);

    const byHost = await gw.root.get('/x-keys/api.anthropic.com');
    expect(byHost.body).toHaveLength(2);
    expect((await gw.root.get('/x-keys?provider=https://api.anthropic.com')).body).toEqual(byHost.body);

    const id = byHost.body[0].ID;
    const byId = await gw.root.get(`/x-keys/${id}`);
    expect(byId.body).toHaveLength(1);
    expect(byId.body[0].ID).toBe(id);
    expect((await gw.root.get(`/x-keys?id=${id}`)).body).toEqual(byId.body);
    expectEnvelope(await gw.root.get('/x-keys/999999'), 404);
    expectEnvelope(await gw.root.get('/x-keys?size=0'), 400);
    expectEnvelope(await gw.root.get('/x-keys?size=abc'), 400);
    expectEnvelope(await gw.root.get('/x-keys?page=-1'), 400);
  });

  it('bounds every number it takes: 400 beyond the range, 404 for an ID no key can have', async () => {
    for (const q of ['id=2147483648', 'id=99999999999', 'id=1e30', 'id=0', 'id=-1', 'level=1001', 'size=1001', 'size=1e9', 'page=1000001', 'page=1e9', 'page=0']) {
      expect(expectEnvelope(await gw.root.get(`/x-keys?${q}`), 400).message, q).toMatch(new RegExp(`^${q.split('=')[0]}: `));
    }
    expect((await gw.root.get('/x-keys?id=2147483647')).body).toEqual([]);
    const last = await gw.root.get('/x-keys?page=1000000&size=1000');
    expect(last.status).toBe(200);
    expect(last.body).toEqual([]);
    for (const id of ['0', '2147483648', '99999999999', '999999999999999', '99999999999999999999']) {
      expect(expectEnvelope(await gw.root.get(`/x-keys/${id}`), 404).code, id).toBe('not_found');
    }
    for (const id of ['0', '2147483648', '999999999999999']) {
      expect(expectEnvelope(await gw.root.put(`/x-keys/${id}`, { Name: 'x' }), 404).code, id).toBe('not_found');
      expect(expectEnvelope(await gw.root.delete(`/x-keys/${id}`), 404).code, id).toBe('not_found');
    }
  });
});

describe('PUT/POST/DELETE /x-keys/{id}', () => {
  it('updates fields, re-encrypts the SecretKey, and deletes', async () => {
    const created = await gw.root.post('/x-keys', { Provider: 'https://api.example.org', SecretKey: SECRET, Level: 7 });
    const id = created.body.Key.ID;
    const put = await gw.root.put(`/x-keys/${id}`, { Name: 'renamed', Status: true, SecretKey: 'sk-new-secret-value-000000000000WXYZ' });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ Action: 'update', Key: { ID: id, Name: 'renamed', Status: true, SecretHint: 'WXYZ' } });
    expect(put.text).not.toContain('sk-new-secret');
    const post = await gw.root.post(`/x-keys/${id}`, { Level: 8, Provider: 'https://api2.example.org' });
    expect(post.body.Key).toMatchObject({ Level: 8, Provider: 'https://api2.example.org', Name: 'renamed' });
    expect((await gw.root.get('/x-keys/api2.example.org')).body).toHaveLength(1);

    expectEnvelope(await gw.root.put(`/x-keys/${id}`, {}), 400);
    expectEnvelope(await gw.root.put(`/x-keys/${id}`, { Status: 1 }), 400);
    expectEnvelope(await gw.root.put(`/x-keys/${id}`, { SecretKey: 'short' }), 400);
    expectEnvelope(await gw.root.put(`/x-keys/abc`, { Status: true }), 400);
    expectEnvelope(await gw.root.put(`/x-keys/999999`, { Status: true }), 404);

    const del = await gw.root.delete(`/x-keys/${id}`);
    expect(del.status).toBe(200);
    expect(del.body).toMatchObject({ Action: 'delete', Key: { ID: id } });
    expectEnvelope(await gw.root.delete(`/x-keys/${id}`), 404);
  });
});

describe('operation log', () => {
  it('records every key change with action, target, details and IP', async () => {
    const rows = await gw.gateway.database.rows<{ action: string; ip: string; details: string; target_id: number }>(sql`select action, ip, details, target_id from operation_logs order by id`);
    const actions = rows.map((r) => r.action);
    expect(actions).toContain('add_key');
    expect(actions).toContain('update_key');
    expect(actions).toContain('delete_key');
    expect(rows.every((r) => r.ip === '127.0.0.1' && r.target_id === 1)).toBe(true);
    expect(rows.map((r) => r.details).join('\n')).not.toContain('sk-');
  });
});
