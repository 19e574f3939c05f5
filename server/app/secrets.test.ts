import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../testing/gateway';

/**
 * Walks every GET endpoint of the OpenAPI document (so endpoints added later are covered too)
 * and the tRPC reads, after storing every kind of secret, and checks that none comes back,
 * and that none reached the log.
 */
const PROVIDER_SECRET = 'sk-live-PROVIDERSECRET-0123456789abcdef';
const AZURE_SECRET = 'azure-SECRET-abcdefghijklmnopqrstuvwxyz';
const PRIVATE_KEY_BODY = 'MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7PRIVATEKEYBODY';
const EMAIL_PASS = 'smtp-PASSWORD-never-returned-42';

let gw: TestGateway;
const responses: string[] = [];

beforeAll(async () => {
  gw = await startTestGateway();
  const record = (r: { text: string; headers: Headers }) => { responses.push(r.text, JSON.stringify([...r.headers])); return r; };
  record(await gw.root.post('/x-keys', { Name: 'std', Level: 1, Provider: 'https://api.openai.com', SecretKey: PROVIDER_SECRET, Status: true }));
  record(await gw.root.post('/x-keys', { Name: 'az', Level: 2, Provider: 'https://r.openai.azure.com', SecretKey: AZURE_SECRET, Status: true, config: { provider_type: 'azure', deployments: { 'gpt-4o': 'd1' } } }));
  record(await gw.root.post('/x-keys', {
    Name: 'vx', Level: 3, Provider: 'https://us-central1-aiplatform.googleapis.com', SecretKey: PROVIDER_SECRET + 'v', Status: true,
    config: { provider_type: 'vertex', base_url: 'https://oauth2.googleapis.com', project_id: 'p', client_email: 'a@p.iam.gserviceaccount.com', private_key: `-----BEGIN PRIVATE KEY-----\n${PRIVATE_KEY_BODY}\n-----END PRIVATE KEY-----` },
  }));
  record(await gw.root.put('/x-config', { EMAIL_PASS, EMAIL_SMTP: 'smtp.example.com' }));
  // Failed writes must not echo the secret either.
  record(await gw.root.post('/x-keys', { Provider: 'not-a-url', SecretKey: PROVIDER_SECRET }));
  record(await gw.root.put('/x-config', { EMAIL_PASS: 42, EMAIL_PORT: PROVIDER_SECRET }));
});
afterAll(async () => { await gw?.close(); });

describe('secrets', () => {
  it('never appear in any GET response of the document, nor in tRPC reads', async () => {
    const doc = (await gw.root.get('/openapi.json')).body;
    const keyId = JSON.parse(responses[0]).Key.ID;
    const sample: Record<string, string> = { selector: String(keyId), id: String(keyId), text: 'abc', identifier: '1', target: '1' };
    let visited = 0;
    for (const [path, ops] of Object.entries<any>(doc.paths)) {
      if (!ops.get) continue;
      const url = path.replace(/\{(\w+)\}/g, (_, name) => sample[name] ?? '1');
      for (const q of ['', '?days=30', '?user=1']) {
        const r = await gw.root.get(url + q);
        responses.push(r.text, JSON.stringify([...r.headers]));
        visited++;
      }
    }
    expect(visited).toBeGreaterThan(10);
    for (const proc of ['keys.list', 'config.get', 'config.view']) {
      const r = await gw.root.get(`/trpc/${proc}?input=${encodeURIComponent(JSON.stringify({}))}`);
      responses.push(r.text);
    }
    const all = responses.join('\n');
    for (const secret of [PROVIDER_SECRET, AZURE_SECRET, PRIVATE_KEY_BODY, EMAIL_PASS, gw.rootKey]) {
      expect(all.includes(secret), `a response contains ${secret.slice(0, 12)}…`).toBe(false);
    }
  });

  it('never reach the server log', async () => {
    expect(gw.logs.length).toBeGreaterThan(0);
    const log = gw.logs.join('\n');
    for (const secret of [PROVIDER_SECRET, AZURE_SECRET, PRIVATE_KEY_BODY, EMAIL_PASS, gw.rootKey]) {
      expect(log.includes(secret), `the log contains ${secret.slice(0, 12)}…`).toBe(false);
    }
  });

  it('are stored encrypted at rest', async () => {
    const rows = await gw.gateway.database.rows<{ dump: string }>(
      (await import('drizzle-orm')).sql`select string_agg(secret_cipher || coalesce(config_secret_cipher, '') || config::text, ' ') as dump from provider_keys`,
    );
    for (const secret of [PROVIDER_SECRET, AZURE_SECRET, PRIVATE_KEY_BODY]) expect(rows[0].dump).not.toContain(secret);
  });
});
