import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKeyPairSync } from 'node:crypto';
import { expectEnvelope } from '../../testing/http';
import { vertexLocation } from '../providers/vertex/index';
import { drain, hello, secret, sleep, startProxyFixture, type ProxyFixture } from '../test-fixture';

let f: ProxyFixture;
beforeAll(async () => { f = await startProxyFixture({ azureApiVersion: '2024-06-01' }); });
afterAll(async () => { await f?.close(); });

describe('azure (cloud-hosted deployments)', () => {
  it('calls the deployment of the model with api-key and the api-version of the model or the default', async () => {
    const up = secret('azure');
    await f.addKey(80, up, {
      provider: `${f.mock.url}/`,
      config: { provider_type: 'azure', deployments: { 'gpt-4o': 'prod-4o', 'text-embedding-3-small': 'embed' }, api_versions: { 'gpt-4o': '2025-01-01-preview' } },
    });
    const user = await f.account({ level: 80 });
    const client = f.openai(user.key);
    const r = await client.chat.completions.create({ model: 'gpt-4o', messages: hello });
    expect(r.choices[0].message.content).toBe('This is a mock answer from gpt-4o.');
    let rec = f.mock.requests.at(-1)!;
    expect(rec).toMatchObject({ path: '/openai/deployments/prod-4o/chat/completions', deployment: 'prod-4o', apiVersion: '2025-01-01-preview', credential: up });
    expect(rec.headers['api-key']).toBe(up);
    expect(rec.headers.authorization).toBeUndefined();

    const e = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'x' });
    expect(e.data).toHaveLength(1);
    rec = f.mock.requests.at(-1)!;
    expect(rec).toMatchObject({ deployment: 'embed', apiVersion: '2024-06-01' });

    f.mock.behave(up, { usage: { prompt_tokens: 40, completion_tokens: 9 } });
    const { items, error } = await drain(await client.chat.completions.create({ model: 'gpt-4o', messages: hello, stream: true }));
    expect(error).toBeUndefined();
    expect(items.every((c) => c.choices.length === 1)).toBe(true);
    const rows = await f.usage(user.id);
    expect(rows.map((row) => [row.endpoint, row.model, row.status])).toEqual([
      ['/v1/chat/completions', 'gpt-4o', 'ok'], ['/v1/embeddings', 'text-embedding-3-small', 'ok'], ['/v1/chat/completions', 'gpt-4o', 'ok'],
    ]);
    expect(rows[2]).toMatchObject({ prompt: 40, completion: 9 });
  });

  it('skips a key without a deployment for the model: the next key serves it, or 400 when none can', async () => {
    const azure = secret('azure-skip');
    const standard = secret('standard-next');
    await f.addKey(81, azure, { config: { provider_type: 'azure', deployments: { 'gpt-4o': 'only-4o' } } });
    await f.addKey(81, standard);
    const user = await f.account({ level: 81 });
    for (let i = 0; i < 2; i++) {
      expect((await f.openai(user.key).chat.completions.create({ model: 'gpt-4o-mini', messages: hello })).model).toBe('gpt-4o-mini');
      expect(f.mock.requests.at(-1)!.credential).toBe(standard);
    }
    await f.addKey(82, secret('azure-alone'), { config: { provider_type: 'azure', deployments: { 'gpt-4o': 'only-4o' } } });
    const lonely = await f.account({ level: 82 });
    const r = await f.gw.as(lonely.key).post('/v1/chat/completions', { model: 'gpt-4o-mini', messages: hello });
    expect(expectEnvelope(r, 400).message).toMatch(/no deployment for model gpt-4o-mini/);
    // A deployment has no Responses API: the call is translated to its chat completions.
    const translated = await f.gw.as(lonely.key).post('/v1/responses', { model: 'gpt-4o', input: 'x' });
    expect(translated.status).toBe(200);
    expect(translated.body).toMatchObject({ object: 'response', status: 'completed', output: [{ type: 'message', content: [{ type: 'output_text', text: 'This is a mock answer from gpt-4o.' }] }] });
    expect(f.mock.requests.at(-1)!.path).toBe('/openai/deployments/only-4o/chat/completions');
  });
});

function serviceAccount(label: string) {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const email = `${label}@proj-1.iam.gserviceaccount.com`;
  f.mock.trustServiceAccount(email, publicKey.export({ type: 'spki', format: 'pem' }) as string);
  return { email, pem: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string };
}

const vertexConfig = (email: string, pem: string) => ({ provider_type: 'vertex', base_url: f.mock.url, project_id: 'proj-1', client_email: email, private_key: pem });

describe('vertex (cloud platform)', () => {
  it('reads the location from the Provider host', () => {
    expect(vertexLocation('europe-west4-aiplatform.googleapis.com')).toBe('europe-west4');
    expect(vertexLocation('aiplatform.googleapis.com')).toBe('global');
    expect(vertexLocation('127.0.0.1')).toBe('us-central1');
  });

  it('signs a service-account JWT, exchanges it once for a cached token, and calls the OpenAI-compatible endpoint', async () => {
    const sa = serviceAccount('svc-main');
    await f.addKey(90, secret('vertex-unused'), { config: vertexConfig(sa.email, sa.pem) });
    const user = await f.account({ level: 90 });
    const tokensBefore = f.mock.tokenRequests;
    const client = f.openai(user.key);
    const r = await client.chat.completions.create({ model: 'gemini-2.5-flash', messages: hello });
    expect(r.choices[0].message.content).toBe('This is a mock answer from google/gemini-2.5-flash.');
    const rec = f.mock.requests.at(-1)!;
    expect(rec).toMatchObject({ path: '/v1/projects/proj-1/locations/us-central1/endpoints/openapi/chat/completions', project: 'proj-1', location: 'us-central1' });
    expect(rec.credential).toMatch(/^ya29\.mock-/);
    expect((rec.body as { model: string }).model).toBe('google/gemini-2.5-flash');
    const token = f.mock.requests.find((q) => q.path === '/token' && q.credential === sa.email)!;
    expect(token).toBeDefined();
    const { items, error } = await drain(await client.chat.completions.create({ model: 'gemini-2.5-flash', messages: hello, stream: true }));
    expect(error).toBeUndefined();
    expect(items.length).toBeGreaterThan(0);
    expect(f.mock.tokenRequests - tokensBefore).toBe(1);
    const rows = await f.usage(user.id);
    expect(rows.map((row) => row.model)).toEqual(['gemini-2.5-flash', 'gemini-2.5-flash']);
    expect(rows[0].credit_used).toBeGreaterThan(0);
  });

  it('renews the token shortly before it expires, and after the upstream revoked it without disabling the key', async () => {
    const sa = serviceAccount('svc-short');
    f.mock.behaveToken(sa.email, { expiresIn: 2 });
    const keyId = await f.addKey(91, secret('vertex-short'), { config: vertexConfig(sa.email, sa.pem) });
    const user = await f.account({ level: 91 });
    const exchanges = () => f.mock.requests.filter((q) => q.path === '/token' && q.credential === sa.email).length;
    const call = () => f.openai(user.key).chat.completions.create({ model: 'gemini-2.5-flash', messages: hello });
    await call();
    await call();
    expect(exchanges()).toBe(1);
    await sleep(1100);
    await call();
    expect(exchanges()).toBe(2);
    f.mock.revokeTokens();
    await call();
    expect(exchanges()).toBe(3);
    await f.gw.gateway.proxy.health.settle();
    expect((await f.gw.root.get('/x-conf')).body.DisabledKeys.find((k: { ID: number }) => k.ID === keyId)).toBeUndefined();
  });

  it('disables a key whose token exchange is refused', async () => {
    const sa = serviceAccount('svc-refused');
    f.mock.behaveToken(sa.email, { status: 401 });
    const keyId = await f.addKey(92, secret('vertex-refused'), { config: vertexConfig(sa.email, sa.pem) });
    const user = await f.account({ level: 92 });
    expectEnvelope(await f.gw.as(user.key).post('/v1/chat/completions', { model: 'gemini-2.5-flash', messages: hello }), 502);
    await f.gw.gateway.proxy.health.settle();
    const disabled = (await f.gw.root.get('/x-conf')).body.DisabledKeys.find((k: { ID: number }) => k.ID === keyId);
    expect(disabled.Reason).toMatch(/token exchange answered 401/);
    expect(await f.usage(user.id)).toHaveLength(0);
  });
});
