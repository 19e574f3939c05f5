/**
 * Claude on the cloud platform (a `vertex` key with `publisher: "anthropic"`): the real
 * @anthropic-ai/sdk as sent, the real openai SDK through translation, whole and streamed, to
 * rawPredict and streamRawPredict over loopback, each call billed once with its cache tokens.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKeyPairSync } from 'node:crypto';
import { drain, hello, secret, startProxyFixture, type ProxyFixture } from '../test-fixture';
import { VERTEX_ANTHROPIC_VERSION } from '../providers/vertex/claude';

let f: ProxyFixture;
const MODEL = 'claude-sonnet-4@20250514';
const PRICE = { InputText: 3, CachedText: 0.3, CacheWrite: 3.75, OutputText: 15 };
const bill = (u: { input: number; cached: number; written: number; output: number }) =>
  (u.input * PRICE.InputText + u.cached * PRICE.CachedText + u.written * PRICE.CacheWrite + u.output * PRICE.OutputText) / 1e6;
const USAGE = { prompt_tokens: 3000, completion_tokens: 40, cached_tokens: 2000, cache_write_tokens: 600 };
const BILLED = bill({ input: 400, cached: 2000, written: 600, output: 40 });

beforeAll(async () => {
  f = await startProxyFixture();
  await f.config({ PRICING: JSON.stringify({ ChatPricing: { [MODEL]: PRICE } }) });
});
afterAll(async () => { await f?.close(); });

/** A Vertex-Claude key on a Level of its own (Provider host 127.0.0.1: location us-central1) and a user routed there. */
async function claudeOnVertex(level: number, label: string) {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const email = `${label}@proj-c.iam.gserviceaccount.com`;
  f.mock.trustServiceAccount(email, publicKey.export({ type: 'spki', format: 'pem' }) as string);
  const keyId = await f.addKey(level, secret(label), {
    config: { provider_type: 'vertex', publisher: 'anthropic', base_url: f.mock.url, project_id: 'proj-c', client_email: email, private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }) },
  });
  return { email, keyId, user: await f.account({ level }) };
}

const MODELS = '/v1/projects/proj-c/locations/us-central1/publishers/anthropic/models/';
const last = () => f.mock.requests.at(-1)!;
const lastBody = () => last().body as Record<string, unknown>;

describe('@anthropic-ai/sdk on a Vertex-Claude key', () => {
  it('calls rawPredict and streamRawPredict with the model in the path and the version in the body, billed once with cache tokens', async () => {
    const { email, user } = await claudeOnVertex(301, 'vc-messages');
    f.mock.behave(email, { text: 'Hello from Claude on Vertex.', usage: USAGE });
    const client = f.anthropic(user.key);
    const params = { model: MODEL, max_tokens: 200, system: 'Be brief.', messages: hello };

    const whole = await client.messages.create(params, { headers: { 'anthropic-beta': 'context-1m-2025-08-07' } });
    expect(whole).toMatchObject({ model: MODEL, content: [{ type: 'text', text: 'Hello from Claude on Vertex.' }], stop_reason: 'end_turn' });
    expect(whole.usage).toMatchObject({ input_tokens: 400, cache_read_input_tokens: 2000, cache_creation_input_tokens: 600, output_tokens: 40 });
    expect(last().path).toBe(`${MODELS}${MODEL}:rawPredict`);
    expect(last().credential).toMatch(/^ya29\.mock-/);
    expect(last().headers['anthropic-beta']).toBe('context-1m-2025-08-07');
    expect(last().headers['x-api-key']).toBeUndefined();
    expect(lastBody()).toEqual({ anthropic_version: VERTEX_ANTHROPIC_VERSION, max_tokens: 200, system: 'Be brief.', messages: hello });

    const streamed = await client.messages.stream(params).finalMessage();
    expect(streamed.content).toEqual([{ type: 'text', text: 'Hello from Claude on Vertex.' }]);
    expect(last().path).toBe(`${MODELS}${MODEL}:streamRawPredict`);
    expect(lastBody()).toMatchObject({ anthropic_version: VERTEX_ANTHROPIC_VERSION, stream: true });
    expect(lastBody()).not.toHaveProperty('model');

    // A version the client chose is kept.
    const own = await f.gw.as(user.key).post('/v1/messages', { ...params, anthropic_version: 'vertex-2099-01-01' });
    expect(own.status).toBe(200);
    expect(lastBody().anthropic_version).toBe('vertex-2099-01-01');

    const rows = await f.usage(user.id);
    expect(rows).toHaveLength(3);
    for (const row of rows) {
      expect(row).toMatchObject({ endpoint: '/v1/messages', model: MODEL, prompt: 3000, cached: 2000, completion: 40, status: 'ok' });
      expect(row.credit_used).toBeCloseTo(BILLED, 12);
    }
  });

  it('counts tokens at count-tokens:rawPredict with the model kept in the body, unbilled', async () => {
    const { user } = await claudeOnVertex(302, 'vc-count');
    const params = { model: MODEL, system: 'Be brief.', messages: [{ role: 'user' as const, content: 'How many tokens is this sentence?' }] };
    const counted = await f.anthropic(user.key).messages.countTokens(params);
    expect(counted.input_tokens).toBe(Math.ceil('Be brief.\nHow many tokens is this sentence?'.length / 4));
    expect(last().path).toBe(`${MODELS}count-tokens:rawPredict`);
    expect(lastBody()).toEqual({ ...params, anthropic_version: VERTEX_ANTHROPIC_VERSION });
    expect(await f.usage(user.id)).toHaveLength(0);
  });

  it('passes Anthropic\'s error answers through', async () => {
    const { email, user } = await claudeOnVertex(303, 'vc-error');
    f.mock.behave(email, { status: 400, times: 1 });
    const err = await f.anthropic(user.key).messages.create({ model: MODEL, max_tokens: 10, messages: hello }).catch((e) => e);
    expect(err.status).toBe(400);
    expect(err.error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    expect(await f.usage(user.id)).toHaveLength(0);
  });
});

describe('the openai SDK on a Vertex-Claude key', () => {
  it('is translated to rawPredict and streamRawPredict, whole and streamed, billed once with cache tokens', async () => {
    const { email, user } = await claudeOnVertex(311, 'vc-chat');
    f.mock.behave(email, { text: 'Translated hello.', usage: USAGE });
    const client = f.openai(user.key);
    const r = await client.chat.completions.create({ model: MODEL, messages: hello, max_tokens: 100 });
    expect(r.choices[0]).toMatchObject({ finish_reason: 'stop', message: { role: 'assistant', content: 'Translated hello.' } });
    expect(r.usage).toMatchObject({ prompt_tokens: 3000, completion_tokens: 40, prompt_tokens_details: { cached_tokens: 2000 } });
    expect(last().path).toBe(`${MODELS}${MODEL}:rawPredict`);
    expect(lastBody()).toEqual({ anthropic_version: VERTEX_ANTHROPIC_VERSION, max_tokens: 100, messages: [{ role: 'user', content: [{ type: 'text', text: hello[0].content }] }] });

    const { items, error } = await drain(await client.chat.completions.create({ model: MODEL, messages: hello, stream: true, stream_options: { include_usage: true } }));
    expect(error).toBeUndefined();
    expect(items.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('Translated hello.');
    expect(items.at(-1)!.usage).toMatchObject({ prompt_tokens: 3000, completion_tokens: 40 });
    expect(last().path).toBe(`${MODELS}${MODEL}:streamRawPredict`);
    expect(lastBody()).not.toHaveProperty('model');

    const rows = await f.usage(user.id);
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      expect(row).toMatchObject({ endpoint: '/v1/chat/completions', model: MODEL, prompt: 3000, cached: 2000, completion: 40, status: 'ok' });
      expect(row.credit_used).toBeCloseTo(BILLED, 12);
    }
  });
});

describe('the publisher setting', () => {
  it('is google or anthropic; anything else is a 400 naming the field', async () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const r = await f.gw.root.post('/x-keys', {
      Level: 330, Provider: f.mock.url, SecretKey: secret('vc-bad-publisher'), Status: true,
      config: { provider_type: 'vertex', publisher: 'meta', base_url: f.mock.url, project_id: 'p', client_email: 'a@b.iam.gserviceaccount.com', private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }) },
    });
    expect(r.status).toBe(400);
    expect(r.text).toMatch(/publisher/);
  });
});

describe('the access token of a Vertex-Claude key', () => {
  it('is exchanged once, and renewed after the upstream revoked it without disabling the key', async () => {
    const { email, keyId, user } = await claudeOnVertex(321, 'vc-renew');
    const exchanges = () => f.mock.requests.filter((q) => q.path === '/token' && q.credential === email).length;
    const call = () => f.anthropic(user.key).messages.create({ model: MODEL, max_tokens: 10, messages: hello });
    await call();
    await call();
    expect(exchanges()).toBe(1);
    f.mock.revokeTokens();
    const renewed = await call();
    expect(renewed.content[0]).toMatchObject({ type: 'text' });
    expect(exchanges()).toBe(2);
    await f.gw.gateway.proxy.health.settle();
    expect((await f.gw.root.get('/x-conf')).body.DisabledKeys.find((k: { ID: number }) => k.ID === keyId)).toBeUndefined();
    expect(await f.usage(user.id)).toHaveLength(3);
  });
});
