import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectEnvelope } from '../../testing/http';
import { estimateTokens } from '../../testing/mock-upstream';
import { speechAudio } from '../../testing/mock-upstream/media';
import { IMAGE_EQUIVALENT_TOKENS, SPEECH_AUDIO_TOKENS_PER_CHAR } from '../../domain/pricing/units';
import { drain, keyedUser, nextLevel, secret, startProxyFixture, type ProxyFixture } from '../test-fixture';

/**
 * The routes beyond chat (legacy completions, moderations, rerank, image generation, speech)
 * through a real gateway and the mock upstream with the real openai SDK, each billed by its
 * unit: tokens, calls, search units, images by size and quality or reported tokens, characters.
 */
let f: ProxyFixture;
const PRICING = {
  ChatPricing: { 'gpt-3.5-turbo-instruct': { InputText: 1.5, OutputText: 2 } },
  CallPricing: { 'paid-moderation': { Call: 0.01 } },
};

beforeAll(async () => {
  f = await startProxyFixture({ userMinBalance: 0 });
  await f.config({ PRICING: JSON.stringify(PRICING) });
}, 60_000);
afterAll(async () => { await f?.close(); });


describe('legacy completions', () => {
  it('answers whole and streamed (fill-in-the-middle too), billed by tokens at ChatPricing', async () => {
    const { up, user, client } = await keyedUser(f, 'completions');
    f.mock.behave(up, { usage: { prompt_tokens: 40, completion_tokens: 10 }, text: 'def add(a, b): return a + b' });
    const whole = await client.completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'def add(', suffix: '\n', max_tokens: 20 });
    expect(whole.choices[0].text).toBe('def add(a, b): return a + b');
    expect(f.mock.requests.at(-1)).toMatchObject({ path: '/v1/completions', body: { suffix: '\n' } });
    const { items, error } = await drain(await client.completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'def add(', stream: true }));
    expect(error).toBeUndefined();
    expect(items.map((c) => c.choices[0]?.text ?? '').join('')).toBe('def add(a, b): return a + b');
    // The proxy asked for the usage chunk itself, and kept it from the client.
    expect((f.mock.requests.at(-1)!.body as any).stream_options).toEqual({ include_usage: true });
    expect(items.every((c) => c.choices.length === 1)).toBe(true);
    const rows = await f.usage(user.id);
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      expect(row).toMatchObject({ endpoint: '/v1/completions', prompt: 40, completion: 10 });
      expect(row.credit_used).toBeCloseTo((40 * 1.5 + 10 * 2) / 1e6, 12);
    }
  });
});

describe('moderations', () => {
  it('is served and billed per call by CallPricing: free where the price is a known 0, charged where it is set', async () => {
    const { user, client } = await keyedUser(f, 'moderation');
    const r = await client.moderations.create({ model: 'omni-moderation-latest', input: ['a calm day', 'attack at dawn'] });
    expect(r.results.map((x) => x.flagged)).toEqual([false, true]);
    await client.moderations.create({ model: 'paid-moderation', input: 'hello' });
    const rows = await f.usage(user.id);
    expect(rows.map((x) => [x.model, x.endpoint])).toEqual([['omni-moderation-latest', '/v1/moderations'], ['paid-moderation', '/v1/moderations']]);
    expect(rows[0].credit_used).toBe(0);
    expect(rows[1].credit_used).toBeCloseTo(0.01, 12);
  });

  it('refuses a moderation model no price table knows (UNPRICED_MODEL_POLICY refuse)', async () => {
    const { user } = await keyedUser(f, 'moderation-unpriced');
    const r = await f.gw.as(user.key).post('/moderations', { model: 'mystery-moderation', input: 'x' });
    expect(expectEnvelope(r, 403).code).toBe('model_not_priced');
  });
});

describe('rerank', () => {
  it('answers in the Cohere/Jina shape and bills search units and input tokens', async () => {
    const { user } = await keyedUser(f, 'rerank');
    const body = { model: 'rerank-v3.5', query: 'green tea', documents: ['black coffee', 'green tea leaves', 'tea time'], top_n: 2, return_documents: true };
    const r = await f.gw.as(user.key).post('/v1/rerank', body);
    expect(r.status).toBe(200);
    expect(r.body.results).toHaveLength(2);
    expect(r.body.results[0]).toMatchObject({ index: 1, document: { text: 'green tea leaves' } });
    const [row] = await f.usage(user.id);
    const tokens = estimateTokens('green tea') + body.documents.reduce((n, d) => n + estimateTokens(d), 0);
    expect(row).toMatchObject({ model: 'rerank-v3.5', endpoint: '/v1/rerank', prompt: tokens, completion: 0 });
    expect(row.credit_used).toBeCloseTo(0.002, 12); // one search unit; rerank-v3.5 has no token price
  });
});

describe('image generation', () => {
  it('bills dall-e images per image by size and quality, and reserves n × that price', async () => {
    const { user, client, level } = await keyedUser(f, 'dalle');
    const r = await client.images.generate({ model: 'dall-e-3', prompt: 'a lighthouse', n: 2, size: '1024x1792', quality: 'hd' });
    expect(r.data).toHaveLength(2);
    const [row] = await f.usage(user.id);
    expect(row).toMatchObject({ model: 'dall-e-3', endpoint: '/v1/images/generations', completion: 2 * IMAGE_EQUIVALENT_TOKENS });
    expect(row.credit_used).toBeCloseTo(2 * 0.12, 12);
    // The units are in /metrics too.
    const metrics = await (await fetch(`${f.gw.url}/metrics`)).text();
    expect(metrics).toMatch(/^switchyard_proxy_units_total\{unit="images",model="dall-e-3"\} 2$/m);
    // 4 hd tall images reserve 0.48: more than a 0.3 balance holds.
    const poor = await f.account({ level, credit: 0.3 });
    const refused = await f.gw.as(poor.key).post('/v1/images/generations', { model: 'dall-e-3', prompt: 'x', n: 4, size: '1024x1792', quality: 'hd' });
    expect(expectEnvelope(refused, 402).code).toBe('insufficient_balance');
    const cheap = await f.gw.as(poor.key).post('/v1/images/generations', { model: 'dall-e-3', prompt: 'x', n: 1, size: '1024x1024', quality: 'standard' });
    expect(cheap.status).toBe(200);
  });

  it('bills gpt-image models by the tokens they report, whole and streamed', async () => {
    const { user, client } = await keyedUser(f, 'gpt-image');
    const r = await client.images.generate({ model: 'gpt-image-1', prompt: 'a fox in snow', size: '1024x1024', quality: 'high' });
    expect(r.usage).toMatchObject({ output_tokens: 4160 });
    const stream = await client.images.generate({ model: 'gpt-image-1', prompt: 'a fox in snow', size: '1024x1024', quality: 'low', stream: true });
    const { items, error } = await drain(stream);
    expect(error).toBeUndefined();
    expect(items.at(-1)).toMatchObject({ type: 'image_generation.completed', usage: { output_tokens: 272 } });
    const rows = await f.usage(user.id);
    const text = estimateTokens('a fox in snow');
    expect(rows.map((x) => [x.prompt, x.completion])).toEqual([[text, 4160], [text, 272]]);
    // gpt-image-1: text input 5, image output 40 per million tokens.
    expect(rows[0].credit_used).toBeCloseTo((text * 5 + 4160 * 40) / 1e6, 12);
    expect(rows[1].credit_used).toBeCloseTo((text * 5 + 272 * 40) / 1e6, 12);
  });

  it('bills an unpriced image model by equivalent tokens under UNPRICED_MODEL_POLICY bill, and refuses it under refuse', async () => {
    const { user } = await keyedUser(f, 'image-unpriced');
    const body = { model: 'house-image-model', prompt: 'a cat', n: 1 };
    expect(expectEnvelope(await f.gw.as(user.key).post('/v1/images/generations', body), 403).code).toBe('model_not_priced');
    await f.config({ UNPRICED_MODEL_POLICY: 'bill:10,30' });
    try {
      expect((await f.gw.as(user.key).post('/v1/images/generations', body)).status).toBe(200);
    } finally {
      await f.config({ UNPRICED_MODEL_POLICY: 'refuse' });
    }
    const [row] = await f.usage(user.id);
    expect(row.completion).toBe(IMAGE_EQUIVALENT_TOKENS);
    expect(row.credit_used).toBeCloseTo((row.prompt * 10 + IMAGE_EQUIVALENT_TOKENS * 30) / 1e6, 12);
  });
});

describe('speech', () => {
  it('relays the audio bytes as they come and bills per input character', async () => {
    const { user, client } = await keyedUser(f, 'speech');
    const input = 'The quick brown fox jumps over the lazy dog.';
    const r = await client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input });
    expect(r.headers.get('content-type')).toBe('audio/mpeg');
    expect(Buffer.from(await r.arrayBuffer()).equals(speechAudio(input))).toBe(true);
    const [row] = await f.usage(user.id);
    expect(row).toMatchObject({ model: 'tts-1', endpoint: '/v1/audio/speech', prompt: input.length, completion: Math.ceil(input.length * SPEECH_AUDIO_TOKENS_PER_CHAR) });
    expect(row.credit_used).toBeCloseTo((input.length * 15) / 1e6, 12); // tts-1 has no audio-token price
    // The request log names the route, how long the call took and when its first byte went out.
    const log = await f.gw.as(user.key).get('/dashboard/requests');
    expect(log.body.data[0]).toMatchObject({ endpoint: '/v1/audio/speech', duration_ms: expect.any(Number), first_byte_ms: expect.any(Number) });
    expect(log.body.data[0].first_byte_ms).toBeLessThanOrEqual(log.body.data[0].duration_ms);
    // Root's tree view holds it, naming the account; its own view does not.
    const tree = await f.gw.root.get('/dashboard/requests?scope=tree&model=tts-1');
    expect(tree.body.data.map((r: { account_id: number }) => r.account_id)).toContain(user.id);
    expect((await f.gw.root.get('/dashboard/requests?model=tts-1')).body.data).toEqual([]);
  });

  it('streams speech as events with stream_format sse, billing the audio tokens reported', async () => {
    const { user } = await keyedUser(f, 'speech-sse');
    const input = 'Hello there';
    const r = await fetch(`${f.gw.url}/v1/audio/speech`, {
      method: 'POST', headers: { authorization: `Bearer ${user.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini-tts', voice: 'alloy', input, stream_format: 'sse' }),
    });
    expect(r.headers.get('content-type')).toContain('text/event-stream');
    const text = await r.text();
    expect(text).toContain('speech.audio.done');
    const out = Math.ceil(speechAudio(input).length / 200);
    const [row] = await f.usage(user.id);
    expect(row).toMatchObject({ prompt: input.length, completion: out });
    expect(row.credit_used).toBeCloseTo((input.length * 0.15 + out * 12) / 1e6, 12);
  });
});

describe('routing the new routes', () => {
  it('skips a cloud-hosted key that has no such endpoint and answers a clear 400 when no key of the Level can serve it', async () => {
    const l = nextLevel();
    await f.addKey(l, secret('azure'), { config: { provider_type: 'azure', deployments: { '*': 'dep' } } });
    const user = await f.account({ level: l });
    const r = await f.gw.as(user.key).post('/v1/moderations', { model: 'omni-moderation-latest', input: 'x' });
    expect(expectEnvelope(r, 400).code).toBe('unsupported_by_provider');
    // The same key serves image generation at its deployment path.
    const img = await f.gw.as(user.key).post('/v1/images/generations', { model: 'dall-e-3', prompt: 'x', size: '1024x1024', quality: 'standard' });
    expect(img.status).toBe(200);
    expect(f.mock.requests.at(-1)).toMatchObject({ path: '/openai/deployments/dep/images/generations' });
  });

  it('applies RESOURCES to the new paths', async () => {
    const { user } = await keyedUser(f, 'resources');
    await f.config({ RESOURCES: '/v1/chat/*,/v1/images/*' });
    try {
      expect(expectEnvelope(await f.gw.as(user.key).post('/v1/audio/speech', { model: 'tts-1', voice: 'alloy', input: 'x' }), 403).code).toBe('resource_not_allowed');
      expect((await f.gw.as(user.key).post('/images/generations', { model: 'dall-e-2', prompt: 'x', size: '256x256' })).status).toBe(200);
    } finally {
      await f.config({ RESOURCES: '' });
    }
  });
});
