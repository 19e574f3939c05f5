/**
 * The Files API (POST/GET/DELETE /v1/files…) through a real gateway and the mock upstream with
 * the real openai SDK: a batch input routed by the model its lines name and measured line by
 * line, kept on the key that received it, read back only by the account that uploaded it, a
 * bad line refusing the whole file with nothing left at the provider, and the upload free.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI, { toFile } from 'openai';
import { sql } from 'drizzle-orm';
import net from 'node:net';
import { keyedUser, nextLevel, secret, startInstancePair, startProxyFixture, type InstancePair, type ProxyFixture } from '../test-fixture';
import { needs } from '../../testing/requirements';
import { insertAccount } from '../../testing/accounts';
import { expectEnvelope } from '../../testing/http';
import { multipartBody } from '../../testing/multipart';
import { until } from '../../testing/until';
import { estimateInputTokens } from '../../domain/pricing/estimate';

let f: ProxyFixture;
beforeAll(async () => {
  f = await startProxyFixture({ userMinBalance: 0 });
}, 180_000);
afterAll(async () => { await f?.close(); });

const MODEL = 'gpt-4o-mini';
const chatLine = (i: number, model = MODEL, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ custom_id: `req-${i}`, method: 'POST', url: '/v1/chat/completions', body: { model, messages: [{ role: 'user', content: `Question ${i}` }], ...extra } });
const jsonl = (lines: string[]) => Buffer.from(`${lines.join('\n')}\n`);

/** The files the provider keeps for a key (its own list, past the gateway). */
const providerFilesOf = async (g: ProxyFixture, up: string) => (await new OpenAI({ apiKey: up, baseURL: `${g.mock.url}/v1`, maxRetries: 0 }).files.list()).data.map((x) => x.id);
const providerFiles = (up: string) => providerFilesOf(f, up);

const rowOf = async (id: string) => (await f.gw.gateway.database.rows<Record<string, unknown>>(sql`select * from batch_files where id = ${id}`))[0];

async function raw(method: string, path: string, key: string, body?: { body: Buffer; type: string }) {
  const r = await fetch(`${f.gw.url}${path}`, { method, headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': body.type } : {}) }, body: body ? new Uint8Array(body.body) : undefined });
  const text = await r.text();
  let json: any;
  try { json = JSON.parse(text); } catch { json = undefined; }
  return { status: r.status, text, body: json, headers: r.headers };
}

describe('uploads', () => {
  it('uploads a batch file with the SDK, lists, retrieves, reads back and deletes it, all free', async () => {
    const { up, user, client } = await keyedUser(f, 'files-life');
    const lines = [chatLine(1, MODEL, { max_tokens: 100 }), chatLine(2), chatLine(3, MODEL, { max_completion_tokens: 7, n: 2 })];
    const data = jsonl(lines);
    const file = await client.files.create({ file: await toFile(data, 'input.jsonl'), purpose: 'batch' });
    expect(file).toMatchObject({ object: 'file', purpose: 'batch', filename: 'input.jsonl', bytes: data.length });
    expect(await providerFiles(up)).toEqual([file.id]);
    // Each line's bytes bound its body's input, as a call's body bytes bound its own.
    const input = lines.reduce((s, l) => s + estimateInputTokens(JSON.parse(l).body, Buffer.from(`${l}\n`), MODEL, 128_000), 0);
    const row = await rowOf(file.id);
    expect(row).toMatchObject({ account_id: user.id, model: MODEL, url: '/v1/chat/completions', lines: 3, uncapped_lines: 1, purpose: 'batch', deleted_at: null });
    expect([Number(row.output_capped), Number(row.input_bound)]).toEqual([114, input]);

    const listed = await client.files.list();
    expect(listed.data.map((x) => x.id)).toEqual([file.id]);
    expect(listed.data[0]).toMatchObject({ id: file.id, object: 'file', bytes: data.length, filename: 'input.jsonl', purpose: 'batch' });
    expect(await client.files.retrieve(file.id)).toMatchObject({ id: file.id, bytes: data.length, purpose: 'batch' });
    const content = await client.files.content(file.id);
    expect(Buffer.from(await content.arrayBuffer()).equals(data)).toBe(true);
    expect(await client.files.delete(file.id)).toMatchObject({ id: file.id, deleted: true });
    expect((await client.files.list()).data).toEqual([]);
    expect(await providerFiles(up)).toEqual([]);
    expect((await rowOf(file.id)).deleted_at).not.toBeNull();
    // Free: no usage record, nothing reserved.
    expect(await f.usage(user.id)).toEqual([]);
    // Counted and logged as every route is, by its canonical path (the ID left out).
    const metrics = await (await fetch(`${f.gw.url}/metrics`)).text();
    for (const route of ['/v1/files', '/v1/files/{id}', '/v1/files/{id}/content']) {
      expect(metrics, route).toMatch(new RegExp(`^switchyard_proxy_requests_total\\{[^}]*route="${route.replace(/[{}]/g, '\\$&')}"[^}]*status_class="2xx"`, 'm'));
    }
    const logged = f.gw.logs.filter((l) => l.includes('"proxy_request"') && l.includes(`"account":${user.id}`)).map((l) => JSON.parse(l));
    expect(logged.map((l) => `${l.method} ${l.path} ${l.status}`)).toContain('POST /v1/files 200');
    expect(logged.find((l) => l.method === 'POST')).toMatchObject({ model: MODEL, credit: 0 });
    expect(logged.map((l) => `${l.method} ${l.path}`)).toContain('DELETE /v1/files/{id}');
  });

  it('streams a file whose purpose comes first, and relays other purposes to the account\'s Level, aliases without /v1 too', async () => {
    const { up, user } = await keyedUser(f, 'files-purpose');
    const data = jsonl([chatLine(1), chatLine(2)]);
    const first = await raw('POST', '/files', user.key, multipartBody([{ name: 'purpose', value: 'batch' }, { name: 'file', filename: 'b.jsonl', data, type: 'application/jsonl' }]));
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ purpose: 'batch', bytes: data.length });
    const notes = Buffer.from('not json at all\n');
    const other = await raw('POST', '/v1/files', user.key, multipartBody([{ name: 'file', filename: 'notes.txt', data: notes, type: 'text/plain' }, { name: 'purpose', value: 'user_data' }]));
    expect(other.status).toBe(200);
    expect(other.body).toMatchObject({ purpose: 'user_data', bytes: notes.length });
    expect((await rowOf(other.body.id))).toMatchObject({ model: null, lines: 0 });
    expect((await providerFiles(up)).sort()).toEqual([first.body.id, other.body.id].sort());
    const onlyBatch = await raw('GET', '/files?purpose=batch', user.key);
    expect(onlyBatch.body.data.map((x: { id: string }) => x.id)).toEqual([first.body.id]);
    const read = await raw('GET', `/files/${other.body.id}/content`, user.key);
    expect(read.text).toBe(notes.toString());
    expect((await raw('DELETE', `/files/${first.body.id}`, user.key)).body).toMatchObject({ deleted: true });
  });

  it('pages the account\'s own files as OpenAI does (after, limit, order), the SDK following the pages', async () => {
    const { user, client } = await keyedUser(f, 'files-pages');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await client.files.create({ file: await toFile(jsonl([chatLine(i)]), `p${i}.jsonl`), purpose: 'batch' })).id);
    const page = await raw('GET', '/v1/files?limit=2&order=asc', user.key);
    expect(page.body).toMatchObject({ object: 'list', has_more: true, first_id: ids[0], last_id: ids[1] });
    const next = await raw('GET', `/v1/files?limit=2&order=asc&after=${ids[1]}`, user.key);
    expect(next.body.data.map((x: { id: string }) => x.id)).toEqual([ids[2], ids[3]]);
    const all: string[] = [];
    for await (const x of client.files.list({ limit: 2 })) all.push(x.id);
    expect(all).toEqual([...ids].reverse());
    expectEnvelope(await f.gw.as(user.key).get('/v1/files?limit=0'), 400);
    expectEnvelope(await f.gw.as(user.key).get('/v1/files?order=up'), 400);
    expectEnvelope(await f.gw.as(user.key).get('/v1/files?after=file-unknown'), 400);
  });

  it('maps the lines\' model as a call\'s and sends the routed one; AllowModels refuses a file of another model', async () => {
    const { up, user, client, level } = await keyedUser(f, 'files-map');
    await f.config({ MODEL_MAPPER: 'files-alias=gpt-4o-mini' });
    try {
      const file = await client.files.create({ file: await toFile(jsonl([chatLine(1, 'files-alias'), chatLine(2, MODEL)]), 'm.jsonl'), purpose: 'batch' });
      const sent = Buffer.from(await (await client.files.content(file.id)).arrayBuffer()).toString().trim().split('\n').map((l) => JSON.parse(l).body.model);
      expect(sent).toEqual([MODEL, MODEL]);
      expect(await rowOf(file.id)).toMatchObject({ model: MODEL, lines: 2 });
    } finally {
      await f.config({ MODEL_MAPPER: '' });
    }
    const limited = await f.account({ level, allowModels: 'gpt-4o' });
    const before = await providerFiles(up);
    const err: any = await f.openai(limited.key).files.create({ file: await toFile(jsonl([chatLine(1)]), 'x.jsonl'), purpose: 'batch' }).catch((e) => e);
    expect(err.status).toBe(403);
    expect(err.error.code).toBe('model_not_allowed');
    expect(await providerFiles(up)).toEqual(before);
    void user;
  });
});

describe('bad files', () => {
  it.each([
    ['a line naming another model', [chatLine(1), chatLine(2), chatLine(3, 'gpt-4o')], 'Line 3 of the file names model gpt-4o, line 1 names gpt-4o-mini'],
    ['a line that is not JSON', [chatLine(1), '{"custom_id": "req-2", "method": ', chatLine(3)], 'Line 2 of the file is not valid JSON'],
    ['a line without a body', [chatLine(1), JSON.stringify({ custom_id: 'x', method: 'POST', url: '/v1/chat/completions' })], 'Line 2 of the file must be a JSON object'],
    ['a first line that is not JSON', ['nope'], 'Line 1 of the file is not valid JSON'],
  ])('refuses %s with 400 naming the line, nothing kept upstream or noted', async (_name, lines, message) => {
    const { up, user, client } = await keyedUser(f, 'files-bad');
    const err: any = await client.files.create({ file: await toFile(jsonl(lines), 'bad.jsonl'), purpose: 'batch' }).catch((e) => e);
    expect(err.status).toBe(400);
    expect(err.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_file' });
    expect(err.error.message).toContain(message);
    expect(await providerFiles(up)).toEqual([]);
    expect((await f.gw.gateway.database.rows(sql`select id from batch_files where account_id = ${user.id}`)).length).toBe(0);
  });

  it('refuses a form without a purpose or a file, with two files, or not multipart, each in the envelope', async () => {
    const { user } = await keyedUser(f, 'files-form');
    const data = jsonl([chatLine(1)]);
    const cases = [
      multipartBody([{ name: 'file', filename: 'a.jsonl', data }]),
      multipartBody([{ name: 'purpose', value: 'fine-tune' }, { name: 'file', filename: 'a.jsonl', data }]),
      multipartBody([{ name: 'purpose', value: 'batch' }]),
      multipartBody([{ name: 'purpose', value: 'batch' }, { name: 'file', filename: 'a.jsonl', data }, { name: 'file', filename: 'b.jsonl', data }]),
      multipartBody([{ name: 'purpose', value: 'batch' }, { name: 'document', filename: 'a.jsonl', data }]),
      { body: Buffer.from('{"purpose":"batch"}'), type: 'application/json' },
    ];
    for (const c of cases) {
      const r = await raw('POST', '/v1/files', user.key, c);
      expect([400, 415], r.text).toContain(r.status);
      expectEnvelope({ status: r.status, body: r.body, text: r.text } as any, r.status);
    }
  });

  it('refuses a file over MAX_FILE_BYTES with 413 naming the setting, declared or as it arrives', async () => {
    const g = await startProxyFixture({ userMinBalance: 0, maxFileBytes: 4096 });
    try {
      const key = secret('files-limit');
      const level = nextLevel();
      await g.addKey(level, key);
      const user = await g.account({ level });
      const { body, type } = multipartBody([{ name: 'purpose', value: 'batch' }, { name: 'file', filename: 'big.jsonl', data: jsonl(Array.from({ length: 100 }, (_, i) => chatLine(i))) }]);
      // Chunked: the limit is found as the bytes arrive.
      const stream = new ReadableStream<Uint8Array>({
        start(c) {
          for (let i = 0; i < body.length; i += 1024) c.enqueue(body.subarray(i, i + 1024));
          c.close();
        },
      });
      const r = await fetch(`${g.gw.url}/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${user.key}`, 'content-type': type }, body: stream, duplex: 'half' } as RequestInit);
      expect(r.status).toBe(413);
      expect((await r.json()).error.message).toContain('MAX_FILE_BYTES');
      // Declared: refused without reading the body.
      const socket = net.connect(Number(new URL(g.gw.url).port), '127.0.0.1');
      await new Promise((done) => socket.once('connect', done));
      let answer = '';
      socket.on('data', (d) => (answer += d.toString('latin1')));
      const closed = new Promise((done) => socket.once('close', done));
      socket.write(`POST /files HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${user.key}\r\ncontent-type: ${type}\r\ncontent-length: 4097\r\n\r\n`);
      await closed;
      expect(answer).toMatch(/^HTTP\/1\.1 413 /);
      expect(answer).toContain('MAX_FILE_BYTES');
      expect(await providerFilesOf(g, key)).toEqual([]);
    } finally {
      await g.close();
    }
  }, 180_000);
});

describe('ownership', () => {
  it('answers a sibling, the parent and another tenant as for a file that does not exist, even on the same provider organization', async () => {
    const up = secret('files-owner');
    const level = nextLevel();
    await f.addKey(level, up);
    const parent = await insertAccount(f.gw, { level, credit: 50 });
    const user = await insertAccount(f.gw, { parent, level, credit: 50 });
    const sibling = await insertAccount(f.gw, { parent, level, credit: 50 });
    const tenant = await insertAccount(f.gw, { role: 'owner', level, credit: 50 });
    // The other tenant's key reaches the same provider organization: only the gateway stands between.
    const added = await f.gw.as(tenant.key).post('/x-keys', { Name: 'same-org', Level: level, Provider: f.mock.url, SecretKey: up, Status: true });
    expect(added.status).toBe(201);
    const file = await f.openai(user.key).files.create({ file: await toFile(jsonl([chatLine(1)]), 'mine.jsonl'), purpose: 'batch' });
    const missing = 'file-doesnotexist0000000000';
    for (const other of [sibling, parent, tenant]) {
      const client = f.openai(other.key);
      expect((await client.files.list()).data).toEqual([]);
      for (const id of [file.id, missing]) {
        for (const call of [() => client.files.retrieve(id), () => client.files.content(id), () => client.files.delete(id)]) {
          const err: any = await call().catch((e) => e);
          expect(err.status).toBe(404);
          expect(err.error).toMatchObject({ code: 'not_found', message: `No such File object: ${id}` });
        }
      }
    }
    // Still there for its owner.
    expect(await f.openai(user.key).files.retrieve(file.id)).toMatchObject({ id: file.id });
  });

  it('answers 400 naming why when the key that holds the file was disabled or deleted', async () => {
    const { user, client, level } = await keyedUser(f, 'files-gone');
    const file = await client.files.create({ file: await toFile(jsonl([chatLine(1)]), 'k.jsonl'), purpose: 'batch' });
    const keyId = (await rowOf(file.id)).key_id as number;
    expect((await f.gw.root.put(`/x-keys/${keyId}`, { Status: false })).status).toBe(200);
    await until(async () => (await raw('GET', `/v1/files/${file.id}`, user.key)).status === 400);
    const disabled = expectEnvelope(await f.gw.as(user.key).get(`/v1/files/${file.id}/content`), 400);
    expect(disabled.message).toContain('is disabled');
    expect((await f.gw.root.delete(`/x-keys/${keyId}`)).status).toBe(200);
    await until(async () => (await raw('GET', `/v1/files/${file.id}`, user.key)).body?.error?.message?.includes('deleted'));
    // A new upload on that Level finds no key to keep it.
    const none: any = await client.files.create({ file: await toFile(jsonl([chatLine(1)]), 'k.jsonl'), purpose: 'batch' }).catch((e) => e);
    expect(none.status).toBe(503);
    void level;
  });

  it('reads a file the batch routes noted for an account (rememberFile) from the key that holds it', async () => {
    const { up, user, client } = await keyedUser(f, 'files-output');
    const keyId = (await f.gw.gateway.database.rows<{ id: number }>(sql`select id from provider_keys where level = (select level from accounts where id = ${user.id}) order by id desc limit 1`))[0].id;
    // A file the provider made itself (as a batch's output is), uploaded past the gateway.
    const made = await new OpenAI({ apiKey: up, baseURL: `${f.mock.url}/v1`, maxRetries: 0 }).files.create({ file: await toFile(Buffer.from('{"id":"out"}\n'), 'out.jsonl'), purpose: 'user_data' });
    expect((await client.files.retrieve(made.id).catch((e) => e)).status).toBe(404);
    await f.gw.gateway.proxy.files.rememberFile({ id: made.id, ownerId: 1, accountId: user.id, keyId, purpose: 'batch_output', filename: 'out.jsonl', bytes: made.bytes });
    const content = await client.files.content(made.id);
    expect(await content.text()).toBe('{"id":"out"}\n');
    expect((await client.files.list()).data.map((x) => x.id)).toEqual([made.id]);
  });
});

describe('paths', () => {
  it('answers IDs of every shape with a 404 in the envelope, never reaching the provider', async () => {
    const { user } = await keyedUser(f, 'files-ids');
    const n = f.mock.requests.length;
    for (const id of ['%00', 'x'.repeat(5000), '..%2F..%2Fetc', '%E2%9C%93', 'file-abc%20def', "file'x", 'file-ok-but-unknown']) {
      for (const suffix of ['', '/content']) {
        const r = await raw('GET', `/v1/files/${id}${suffix}`, user.key);
        expect(r.status, `${id}${suffix}: ${r.text}`).toBe(404);
        expectEnvelope({ status: r.status, body: r.body, text: r.text } as any, 404);
      }
      const d = await raw('DELETE', `/files/${id}`, user.key);
      expect(d.status).toBe(404);
    }
    expect(f.mock.requests.length).toBe(n);
  });

  it('authenticates and checks Resources on every route', async () => {
    const { user, level } = await keyedUser(f, 'files-auth');
    expect((await raw('GET', '/v1/files', 'sk-wrong')).status).toBe(401);
    expect((await raw('POST', '/files', 'sk-wrong', multipartBody([{ name: 'purpose', value: 'batch' }]))).status).toBe(401);
    const narrow = await f.account({ level, resources: '/v1/chat/completions' });
    for (const [method, path] of [['GET', '/v1/files'], ['GET', '/files/file-x'], ['DELETE', '/v1/files/file-x'], ['GET', '/v1/files/file-x/content']]) {
      const r = await raw(method, path, narrow.key);
      expect(r.status, `${method} ${path}`).toBe(403);
      expect(r.body.error.code).toBe('resource_not_allowed');
    }
    const up = await raw('POST', '/v1/files', narrow.key, multipartBody([{ name: 'purpose', value: 'batch' }, { name: 'file', filename: 'a.jsonl', data: jsonl([chatLine(1)]) }]));
    expect(up.status).toBe(403);
    void user;
  });
});

/** Two gateways on one PostgreSQL database: a file uploaded through one is read and deleted through the other. */
for (const shared of ['Redis', 'the database'] as const) {
  describe.runIf(process.env.TEST_DATABASE_URL)(`files across two instances sharing ${shared}`, shared === 'Redis' ? needs('redis') : {}, () => {
    let pair: InstancePair;
    beforeAll(async () => { pair = await startInstancePair('files', shared === 'Redis'); }, 120_000);
    afterAll(async () => { await pair?.close(); });

    it('finds the key that holds a file on the instance that did not receive it, for its owner only', async () => {
      const { gws, mock } = pair;
      const up = secret(`files-shared-${shared === 'Redis' ? 'redis' : 'db'}`);
      expect((await gws[0].root.post('/x-keys', { Level: 246, Provider: mock.url, SecretKey: up, Status: true })).status).toBe(201);
      const user = await insertAccount(gws[0], { credit: 50, level: 246 });
      const sibling = await insertAccount(gws[0], { credit: 50, level: 246 });
      const clients = gws.map((g) => new OpenAI({ apiKey: user.key, baseURL: `${g.url}/v1`, maxRetries: 0 }));
      // The second instance hears of the key through the change feed.
      await until(async () => (await clients[1].files.create({ file: await toFile(jsonl([chatLine(0)]), 'ready.jsonl'), purpose: 'batch' }).then(() => true, () => false)));
      const data = jsonl([chatLine(1), chatLine(2)]);
      const file = await clients[0].files.create({ file: await toFile(data, 'shared.jsonl'), purpose: 'batch' });
      expect(Buffer.from(await (await clients[1].files.content(file.id)).arrayBuffer()).equals(data)).toBe(true);
      expect((await new OpenAI({ apiKey: sibling.key, baseURL: `${gws[1].url}/v1`, maxRetries: 0 }).files.retrieve(file.id).catch((e) => e)).status).toBe(404);
      expect(await clients[1].files.delete(file.id)).toMatchObject({ deleted: true });
      expect((await clients[0].files.list()).data.map((x) => x.id)).not.toContain(file.id);
    });
  });
}
