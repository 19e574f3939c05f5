import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import net from 'node:net';
import { fileBytes as bytes, multipartBody as form, sha256 as sha } from '../../testing/multipart';
import { toFile } from 'openai';
import { expectEnvelope } from '../../testing/http';
import { AUDIO_BYTES_PER_SECOND, type ReceivedFile } from '../../testing/mock-upstream/uploads';
import { drain, failingPair, keyedUser, sleep, startProxyFixture, type ProxyFixture } from '../test-fixture';

/**
 * Multipart uploads (transcriptions, translations, image edits and variations) through a real
 * gateway and the mock upstream with the openai SDK: streamed on as they arrive, the model
 * field found wherever it is, billed by seconds of audio, tokens or images, refused over the
 * upload limit without being read, and nothing left behind by a client that stops half-way.
 */
let f: ProxyFixture;
const LIMIT = 24 * 1024 * 1024;

beforeAll(async () => {
  f = await startProxyFixture({ userMinBalance: 0, maxUploadBytes: LIMIT });
}, 60_000);
afterAll(async () => { await f?.close(); });


const filesOf = (body: unknown) => (body as { files: ReceivedFile[] }).files;

describe('audio transcriptions and translations', () => {
  it('streams the file upstream with the model sent after it, and bills whisper by seconds of audio', async () => {
    const { user, client } = await keyedUser(f, 'whisper');
    const audio = bytes(10 * AUDIO_BYTES_PER_SECOND);
    const r = await client.audio.transcriptions.create({ file: await toFile(audio, 'talk.mp3', { type: 'audio/mpeg' }), model: 'whisper-1' });
    expect(r.text).toBe(`Transcript of talk.mp3 (${audio.length} bytes).`);
    const rec = f.mock.requests.at(-1)!;
    expect(rec.path).toBe('/v1/audio/transcriptions');
    expect(rec.headers['content-type']).toMatch(/^multipart\/form-data; boundary=switchyard-/);
    expect(rec.body).toMatchObject({ model: 'whisper-1' });
    expect(filesOf(rec.body)).toEqual([{ field: 'file', filename: 'talk.mp3', mimeType: 'audio/mpeg', bytes: audio.length, sha256: sha(audio) }]);
    const [row] = await f.usage(user.id);
    expect(row).toMatchObject({ model: 'whisper-1', endpoint: '/v1/audio/transcriptions', prompt: 100, completion: 0 });
    expect(row.credit_used).toBeCloseTo((100 * 10) / 1e6, 12); // 10 s = 100 audio tokens at 10 per million
  });

  it('answers every response_format, translations too, and replaces a mapped model in the form', async () => {
    const { user, client } = await keyedUser(f, 'formats');
    await f.config({ MODEL_MAPPER: 'my-whisper=whisper-1' });
    try {
      const file = async () => toFile(bytes(3 * AUDIO_BYTES_PER_SECOND), 'a.wav', { type: 'audio/wav' });
      const text = await client.audio.transcriptions.create({ file: await file(), model: 'my-whisper', response_format: 'text' });
      expect(text).toBe(`Transcript of a.wav (${3 * AUDIO_BYTES_PER_SECOND} bytes).`);
      expect(f.mock.requests.at(-1)!.body).toMatchObject({ model: 'whisper-1', response_format: 'text' });
      const srt = await client.audio.transcriptions.create({ file: await file(), model: 'whisper-1', response_format: 'srt' });
      expect(String(srt)).toMatch(/^1\n00:00:00,000 --> /);
      const vtt = await client.audio.transcriptions.create({ file: await file(), model: 'whisper-1', response_format: 'vtt' });
      expect(String(vtt)).toMatch(/^WEBVTT/);
      const verbose = await client.audio.transcriptions.create({ file: await file(), model: 'whisper-1', response_format: 'verbose_json' });
      expect(verbose).toMatchObject({ duration: 3, task: 'transcribe' });
      const tr = await client.audio.translations.create({ file: await file(), model: 'whisper-1' });
      expect(tr.text).toContain('Transcript of a.wav');
    } finally {
      await f.config({ MODEL_MAPPER: '' });
    }
    const rows = await f.usage(user.id);
    expect(rows.map((r) => r.endpoint)).toEqual([...Array(4).fill('/v1/audio/transcriptions'), '/v1/audio/translations']);
    // verbose_json and json report 3 s; a plain transcript is estimated from its length (15 characters a second).
    expect(rows[3].prompt).toBe(30);
    expect(rows[4].prompt).toBe(30);
    expect(rows[0].prompt).toBe(Math.ceil(`Transcript of a.wav (${3 * AUDIO_BYTES_PER_SECOND} bytes).`.length / 15) * 10);
  });

  it('streams a gpt-4o transcript as events and bills the tokens it reports', async () => {
    const { user, client } = await keyedUser(f, 'transcribe-stream');
    const audio = bytes(4 * AUDIO_BYTES_PER_SECOND);
    const stream = await client.audio.transcriptions.create({ file: await toFile(audio, 'b.mp3'), model: 'gpt-4o-transcribe', stream: true });
    const { items, error } = await drain(stream as AsyncIterable<any>);
    expect(error).toBeUndefined();
    expect(items.at(-1)).toMatchObject({ type: 'transcript.text.done', usage: { input_tokens: 45 } });
    const [row] = await f.usage(user.id);
    const out = items.at(-1).usage.output_tokens;
    expect(row).toMatchObject({ prompt: 45, completion: out });
    // gpt-4o-transcribe: text in 2.5, audio in 6, text out 10 per million tokens.
    expect(row.credit_used).toBeCloseTo((5 * 2.5 + 40 * 6 + out * 10) / 1e6, 12);
  });
});

describe('image edits and variations', () => {
  it('sends every image[] upstream and bills gpt-image by tokens, dall-e variations per image', async () => {
    const { user, client } = await keyedUser(f, 'edits');
    const a = bytes(50_000, 3);
    const b = bytes(70_000, 5);
    const r = await client.images.edit({ model: 'gpt-image-1', prompt: 'add a hat', image: [await toFile(a, 'a.png', { type: 'image/png' }), await toFile(b, 'b.png', { type: 'image/png' })], quality: 'low', size: '1024x1024' });
    expect(r.data).toHaveLength(1);
    const rec = f.mock.requests.at(-1)!;
    expect(rec.path).toBe('/v1/images/edits');
    expect(filesOf(rec.body).map((x) => [x.field, x.bytes, x.sha256])).toEqual([['image[]', a.length, sha(a)], ['image[]', b.length, sha(b)]]);
    const v = await client.images.createVariation({ model: 'dall-e-2', image: await toFile(a, 'a.png', { type: 'image/png' }), n: 2, size: '256x256' });
    expect(v.data).toHaveLength(2);
    const rows = await f.usage(user.id);
    expect(rows.map((x) => x.endpoint)).toEqual(['/v1/images/edits', '/v1/images/variations']);
    expect(rows[0].completion).toBe(272);
    expect(rows[0].credit_used).toBeCloseTo((rows[0].prompt - 2 * 323) * 5 / 1e6 + 2 * 323 * 10 / 1e6 + 272 * 40 / 1e6, 12);
    expect(rows[1].credit_used).toBeCloseTo(2 * 0.016, 12);
  });
});

const post = (key: string, path: string, f2: { body: Buffer; type: string }) => fetch(`${f.gw.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': f2.type }, body: new Uint8Array(f2.body) });

describe('upload failover and refusals', () => {
  it('fails over to the next key when the upload was kept whole (model last), but not once part of it went upstream live', async () => {
    const { user } = await failingPair(f, 'upload', { status: 500 });
    const audio = bytes(2 * AUDIO_BYTES_PER_SECOND);
    for (let i = 0; i < 2; i++) {
      const r = await post(user.key, '/v1/audio/transcriptions', form([{ name: 'file', filename: 'x.mp3', data: audio }, { name: 'model', value: 'whisper-1' }]));
      expect(r.status).toBe(200);
    }
    // Model first: the file streams upstream as it arrives; a key that fails then cannot be followed by another.
    const modelFirst = form([{ name: 'model', value: 'whisper-1' }, { name: 'file', filename: 'x.mp3', data: audio }]);
    const answers = [await post(user.key, '/v1/audio/transcriptions', modelFirst), await post(user.key, '/v1/audio/transcriptions', modelFirst)];
    expect(answers.map((a) => a.status).sort()).toEqual([200, 502]);
    expect(f.gw.gateway.proxy.admission.open).toBe(0);
  });

  it('refuses a declared length over MAX_UPLOAD_BYTES with 413 without reading the body, and a form without a model with 400', async () => {
    const { user } = await keyedUser(f, 'too-large');
    const socket = net.connect(Number(new URL(f.gw.url).port), '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    let answer = '';
    socket.on('data', (d) => (answer += d.toString('latin1')));
    const closed = new Promise((r) => socket.once('close', r));
    socket.write(`POST /v1/audio/transcriptions HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${user.key}\r\ncontent-type: multipart/form-data; boundary=b\r\ncontent-length: ${LIMIT + 1}\r\n\r\n`);
    await closed;
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer).toContain('body_too_large');
    const noModel = await post(user.key, '/v1/audio/transcriptions', form([{ name: 'file', filename: 'x.mp3', data: bytes(1000) }]));
    expect(noModel.status).toBe(400);
    expect((await noModel.json()).error.code).toBe('invalid_model');
    const json = await fetch(`${f.gw.url}/v1/audio/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${user.key}`, 'content-type': 'application/json' }, body: '{"model":"whisper-1"}' });
    expect(expectEnvelope({ status: json.status, body: await json.json(), text: '', headers: {} } as any, 415).code).toBe('unsupported_media_type');
  });

  it('frees everything when the client stops half-way through the upload', async () => {
    const { user } = await keyedUser(f, 'half-way');
    const before = f.mock.requests.length;
    const audio = bytes(4 * 1024 * 1024);
    const { body, type } = form([{ name: 'model', value: 'whisper-1' }, { name: 'file', filename: 'x.mp3', data: audio }]);
    const socket = net.connect(Number(new URL(f.gw.url).port), '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    socket.write(`POST /v1/audio/transcriptions HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${user.key}\r\ncontent-type: ${type}\r\ncontent-length: ${body.length}\r\n\r\n`);
    socket.write(body.subarray(0, body.length >> 1));
    // The upload began streaming upstream (the model came first)…
    for (let i = 0; i < 100 && f.mock.requests.length === before; i++) await sleep(20);
    socket.destroy();
    for (let i = 0; i < 100 && f.gw.gateway.proxy.inFlight > 0; i++) await sleep(20);
    expect(f.gw.gateway.proxy.inFlight).toBe(0);
    expect(f.gw.gateway.proxy.admission.open).toBe(0);
    expect(await f.usage(user.id)).toEqual([]);
  });
});
