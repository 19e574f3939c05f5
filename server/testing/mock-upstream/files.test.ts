import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReadStream } from 'node:fs';
import { request } from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI, { toFile } from 'openai';
import { startMockUpstream, type MockUpstream } from '../mock-upstream';

let mock: MockUpstream;
let dir: string;
const openai = (key = 'sk-files-a') => new OpenAI({ apiKey: key, baseURL: `${mock.url}/v1`, maxRetries: 0 });
const line = (id: string) => JSON.stringify({ custom_id: id, method: 'POST', url: '/v1/chat/completions', body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: `hi ${id}` }] } });

beforeAll(async () => {
  mock = await startMockUpstream();
  dir = await mkdtemp(join(tmpdir(), 'files-test-'));
});
afterAll(async () => {
  await mock.close();
  await rm(dir, { recursive: true, force: true });
});

describe('OpenAI Files API', () => {
  it('keeps an upload streamed from disk, lists, reads back and deletes it', async () => {
    const text = `${line('a')}\n${line('b')}\n`;
    const path = join(dir, 'requests.jsonl');
    await writeFile(path, text);
    const before = Math.floor(Date.now() / 1000);
    const f = await openai().files.create({ file: createReadStream(path), purpose: 'batch' });
    expect(f).toMatchObject({ object: 'file', bytes: Buffer.byteLength(text), filename: 'requests.jsonl', purpose: 'batch', status: 'processed' });
    expect(f.id).toMatch(/^file-/);
    expect(f.created_at).toBeGreaterThanOrEqual(before);
    // Batch files expire after 30 days unless asked otherwise.
    expect(f.expires_at).toBe(f.created_at + 30 * 24 * 3600);

    expect(await openai().files.retrieve(f.id)).toEqual(f);
    const back = await openai().files.content(f.id);
    expect(await back.text()).toBe(text);

    const rec = mock.requests.find((r) => r.method === 'POST' && r.path === '/v1/files');
    expect(rec).toMatchObject({ credential: 'sk-files-a', body: { purpose: 'batch' } });

    expect(await openai().files.delete(f.id)).toEqual({ id: f.id, object: 'file', deleted: true });
    await expect(openai().files.retrieve(f.id)).rejects.toMatchObject({ status: 404, error: { type: 'invalid_request_error', message: `No such File object: ${f.id}` } });
  });

  it('takes toFile uploads with an expiry and lists them page by page, newest first, filtered by purpose', async () => {
    const key = 'sk-files-list';
    const made = [];
    for (let i = 0; i < 5; i++) {
      made.push(await openai(key).files.create({ file: await toFile(Buffer.from(`note ${i}`), `note-${i}.txt`), purpose: 'user_data', expires_after: { anchor: 'created_at', seconds: 3600 } }));
    }
    expect(made[0].expires_at).toBe(made[0].created_at + 3600);
    await openai(key).files.create({ file: await toFile(Buffer.from(line('x')), 'one.jsonl'), purpose: 'batch' });
    const seen: string[] = [];
    const first = await openai(key).files.list({ purpose: 'user_data', limit: 2 });
    expect(first.data).toHaveLength(2);
    expect(first.has_more).toBe(true);
    for await (const f of openai(key).files.list({ purpose: 'user_data', limit: 2 })) seen.push(f.id);
    expect(seen).toEqual(made.map((f) => f.id).reverse());
    const asc: string[] = [];
    for await (const f of openai(key).files.list({ purpose: 'user_data', order: 'asc', limit: 3 })) asc.push(f.id);
    expect(asc).toEqual(made.map((f) => f.id));
    const everything = await openai(key).files.list();
    expect(everything.data.map((f) => f.purpose).sort()).toEqual(['batch', 'user_data', 'user_data', 'user_data', 'user_data', 'user_data']);
  });

  it('keeps files per credential: another key gets 404 and sees none of them', async () => {
    const f = await openai('sk-files-owner').files.create({ file: await toFile(Buffer.from('secret'), 'secret.txt'), purpose: 'user_data' });
    const other = openai('sk-files-stranger');
    await expect(other.files.retrieve(f.id)).rejects.toMatchObject({ status: 404 });
    await expect(other.files.content(f.id)).rejects.toMatchObject({ status: 404 });
    await expect(other.files.delete(f.id)).rejects.toMatchObject({ status: 404 });
    expect((await other.files.list()).data).toEqual([]);
    expect((await openai('sk-files-owner').files.retrieve(f.id)).id).toBe(f.id);
  });

  it('answers with the behaviour set for the credential, as its other endpoints do', async () => {
    mock.behave('sk-files-limited', { status: 429, retryAfter: 2, times: 1 });
    const limited = await openai('sk-files-limited').files.list().catch((e: { status: number; headers: Headers }) => e);
    expect(limited).toMatchObject({ status: 429 });
    expect((limited as { headers: Headers }).headers.get('retry-after')).toBe('2');
    expect((await openai('sk-files-limited').files.list()).data).toEqual([]);
    const anonymous = await fetch(`${mock.url}/v1/files`);
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toMatchObject({ error: { type: 'invalid_request_error', code: 'invalid_api_key' } });
  });

  it('refuses what OpenAI refuses at upload, in its error shape', async () => {
    const c = openai('sk-files-refused');
    await expect(c.files.create({ file: await toFile(Buffer.from('x'), 'x.txt'), purpose: 'fine-tune-results' as never })).rejects.toMatchObject({
      status: 400, error: { type: 'invalid_request_error', param: 'purpose' },
    });
    await expect(c.files.create({ file: await toFile(Buffer.from(line('a')), 'requests.json'), purpose: 'batch' })).rejects.toMatchObject({
      status: 400, error: { message: 'Invalid file format for Batch API. Must be .jsonl' },
    });
    await expect(c.files.create({ file: await toFile(Buffer.from('x'), 'x.txt'), purpose: 'user_data', expires_after: { anchor: 'created_at', seconds: 60 } })).rejects.toMatchObject({
      status: 400, error: { param: 'expires_after' },
    });
    const assistants = await c.files.create({ file: await toFile(Buffer.from('doc'), 'doc.txt'), purpose: 'assistants' });
    await expect(c.files.content(assistants.id)).rejects.toMatchObject({ status: 400, error: { message: 'Not allowed to download files of purpose: assistants' } });
    await expect(c.files.list({ limit: 0 })).rejects.toMatchObject({ status: 400, error: { param: 'limit' } });
    // Nothing refused was kept.
    expect((await c.files.list()).data.map((f) => f.id)).toEqual([assistants.id]);
  });

  it('keeps a 200 MB upload on disk, not in memory: resident memory grows far less than the file', async () => {
    const size = 200 * 1024 * 1024;
    const boundary = 'mock-files-boundary';
    const head = Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="purpose"\r\n\r\nuser_data\r\n--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="big.bin"\r\ncontent-type: application/octet-stream\r\n\r\n`);
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    const chunk = Buffer.alloc(1024 * 1024, 0x61);
    const base = process.memoryUsage().rss;
    let peak = base;
    const sampler = setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss); }, 5);
    // Written as the socket drains (fetch would read a stream body ahead), so only the mock could hold the whole file.
    const r = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request(`${mock.url}/v1/files`, { method: 'POST', headers: { authorization: 'Bearer sk-files-big', 'content-type': `multipart/form-data; boundary=${boundary}` } }, (res) => {
        let text = '';
        res.on('data', (c: Buffer) => { text += c.toString(); });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on('error', reject);
      req.write(head);
      let sent = 0;
      const go = () => {
        while (sent < size) {
          sent += chunk.length;
          if (!req.write(chunk)) return void req.once('drain', go);
        }
        req.end(tail);
      };
      go();
    });
    clearInterval(sampler);
    expect(r.status).toBe(200);
    const f = JSON.parse(r.text) as { id: string; bytes: number };
    expect(f.bytes).toBe(size);
    expect(peak - base).toBeLessThan(100 * 1024 * 1024);
    await openai('sk-files-big').files.delete(f.id);
  }, 120_000);

  it('streams a large upload to disk and back without changing a byte', async () => {
    const path = join(dir, 'big.bin');
    const chunk = Buffer.alloc(1024 * 1024, 7);
    chunk.write('start');
    await writeFile(path, Buffer.concat(Array.from({ length: 24 }, () => chunk)));
    const f = await openai().files.create({ file: createReadStream(path), purpose: 'user_data' });
    expect(f.bytes).toBe(24 * 1024 * 1024);
    const back = Buffer.from(await (await openai().files.content(f.id)).arrayBuffer());
    expect(back.length).toBe(f.bytes);
    expect(back.equals(Buffer.concat(Array.from({ length: 24 }, () => chunk)))).toBe(true);
  });
});
