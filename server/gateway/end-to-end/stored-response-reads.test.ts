/**
 * A stored response read, listed and deleted through the gateway with the real `openai` SDK
 * (responses.retrieve, responses.inputItems.list, responses.delete): a native response on the
 * provider key that created it (a Level of three keys; the mock, as OpenAI, knows a response
 * only on its key), a translated one (an Anthropic key) from the gateway's own store; only by
 * the account that created it; free; on one instance and across two sharing Redis or the database.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { drain, secret, startInstancePair, startProxyFixture, type InstancePair, type ProxyFixture } from '../test-fixture';
import { insertAccount } from '../../testing/accounts';
import type { MockUpstream } from '../../testing/mock-upstream';
import { needs } from '../../testing/requirements';
import { until } from '../../testing/until';

const NATIVE = 'gpt-4o-mini';
const CLAUDE = 'claude-test-1';
const PRICING = JSON.stringify({ ChatPricing: { [CLAUDE]: { InputText: 1, OutputText: 5 } } });
const ANTHROPIC = { provider_type: 'anthropic' };

/** The SDK's error for a call that must fail. */
const failure = (p: PromiseLike<unknown>): Promise<any> => Promise.resolve(p).then(() => { throw new Error('expected a failure'); }, (e) => e);

/** Every input item of `id`, the SDK following the pages (`limit` a page), oldest first. */
async function allItems(client: OpenAI, id: string, limit: number): Promise<any[]> {
  const out: any[] = [];
  for await (const item of client.responses.inputItems.list(id, { limit, order: 'asc' })) out.push(item);
  return out;
}

/** The text of listed items, as roles and text, to compare with the conversation. */
const said = (items: any[]) => items.map((i) => `${i.role}:${i.content.map((p: any) => p.text).join('')}`);

/** A conversation of two turns: its two responses. */
async function twoTurns(client: OpenAI, model: string, streamed = false) {
  const first = await client.responses.create({ model, input: 'Start' });
  const params = { model, input: [{ role: 'user' as const, content: 'Go on' }], previous_response_id: first.id };
  if (!streamed) return { first, second: await client.responses.create(params) };
  const { items, error } = await drain(await client.responses.create({ ...params, stream: true }));
  expect(error).toBeUndefined();
  const done = items.at(-1) as any;
  expect(done.type).toBe('response.completed');
  return { first, second: done.response as OpenAI.Responses.Response };
}

/** The reads of a response an account created, then its deletion; `mockCalls` counts the upstream calls they made. */
async function readsAndDelete(client: OpenAI, stranger: OpenAI, model: string, mock: MockUpstream, native: boolean) {
  const { first, second } = await twoTurns(client, model);
  const creator = mock.requests.at(-1)!.credential;
  const before = mock.requests.length;

  const got = await client.responses.retrieve(second.id);
  expect(got).toEqual(second);
  const items = await allItems(client, second.id, 1);
  // The whole conversation the answer started from, as OpenAI lists it: the first turn, its answer, the new input.
  expect(said(items)).toEqual(['user:Start', `assistant:${(first.output[0] as any).content[0].text}`, 'user:Go on']);
  expect(new Set(items.map((i) => i.id)).size).toBe(3);
  const newestFirst = await client.responses.inputItems.list(second.id, { limit: 2 });
  expect(newestFirst.data.map((i: any) => i.id)).toEqual([items[2].id, items[1].id]);
  expect(newestFirst.has_more).toBe(true);
  if (native) {
    // Each read reached the key that created the response, with the client's query.
    const reads = mock.requests.slice(before);
    expect(reads.length).toBe(1 + 3 + 1);
    expect(reads.every((r) => r.credential === creator && r.method === 'GET')).toBe(true);
    expect(reads.at(-1)!).toMatchObject({ path: `/v1/responses/${second.id}/input_items`, query: { limit: '2' } });
  } else expect(mock.requests.length).toBe(before);

  // Another account of the same Owner knows no such response; it is still there for its own.
  for (const call of [() => stranger.responses.retrieve(second.id), () => stranger.responses.inputItems.list(second.id), () => stranger.responses.delete(second.id)]) {
    const err = await failure(call());
    expect(err.status).toBe(404);
    expect(err.error.message).toBe(`No response found with id '${second.id}'.`);
  }
  expect((await client.responses.retrieve(second.id)).id).toBe(second.id);

  const deleted = await client.responses.delete(second.id).asResponse();
  expect(deleted.status).toBe(200);
  expect(await deleted.json()).toEqual({ id: second.id, object: 'response.deleted', deleted: true });
  expect((await failure(client.responses.retrieve(second.id))).status).toBe(404);
  expect((await failure(client.responses.inputItems.list(second.id))).status).toBe(404);
  const again = await failure(client.responses.create({ model, input: 'More', previous_response_id: second.id }));
  expect(again.status).toBe(400);
  expect(again.error.code).toBe('previous_response_not_found');
  // The first turn is untouched.
  expect((await client.responses.retrieve(first.id)).id).toBe(first.id);
  return creator;
}

describe('stored response reads on one instance', () => {
  let f: ProxyFixture;
  beforeAll(async () => {
    f = await startProxyFixture();
    await f.config({ PRICING });
  });
  afterAll(async () => { await f?.close(); });

  it('native: each call reaches the key that created the response, over three keys; a disabled key is 404; nothing is billed', async () => {
    const keys = [secret('reads-a'), secret('reads-b'), secret('reads-c')];
    const ids: number[] = [];
    for (const k of keys) ids.push(await f.addKey(311, k));
    const user = await f.account({ level: 311 });
    const stranger = await f.account({ level: 311 });
    const client = f.openai(user.key);
    const creators = new Set<string | null>();
    for (let i = 0; i < 3; i++) creators.add(await readsAndDelete(client, f.openai(stranger.key), NATIVE, f.mock, true));
    expect(creators.size).toBeGreaterThan(1);

    // Reads are free: no usage beyond the calls that created responses.
    const billed = (await f.usage(user.id)).length;
    const kept = await client.responses.create({ model: NATIVE, input: 'Keep me' });
    expect((await f.usage(user.id)).length).toBe(billed + 1);
    await client.responses.retrieve(kept.id);
    await client.responses.inputItems.list(kept.id);
    expect((await f.usage(user.id)).length).toBe(billed + 1);
    expect(await f.usage(stranger.id)).toEqual([]);

    const creator = ids[keys.indexOf(f.mock.requests.at(-1)!.credential!)];
    expect((await f.gw.root.put(`/x-keys/${creator}`, { Status: false })).status).toBe(200);
    const n = f.mock.requests.length;
    for (const call of [() => client.responses.retrieve(kept.id), () => client.responses.delete(kept.id)]) {
      const err = await failure(call());
      expect(err.status).toBe(404);
      expect(err.error.message).toBe(`No response found with id '${kept.id}'.`);
    }
    expect(f.mock.requests.length).toBe(n);
    expect((await failure(client.responses.retrieve('resp_never_made'))).status).toBe(404);
  });

  it('Anthropic key: the gateway answers from its store, whole or streamed, for the account that created it', async () => {
    await f.addKey(312, secret('reads-claude'), { config: ANTHROPIC });
    const user = await f.account({ level: 312 });
    const client = f.openai(user.key);
    await readsAndDelete(client, f.openai((await f.account({ level: 312 })).key), CLAUDE, f.mock, false);
    const { second } = await twoTurns(client, CLAUDE, true);
    expect(second.id).toMatch(/^resp_gw_/);
    // The object of the stream's response.completed; the SDK adds output_text to what it retrieves.
    const { output_text: text, ...got } = await client.responses.retrieve(second.id);
    expect(got).toEqual(second);
    expect(text).toBe('This is a mock answer from claude-test-1.');
    const billed = (await f.usage(user.id)).length;
    await client.responses.inputItems.list(second.id, { order: 'asc' });
    expect((await f.usage(user.id)).length).toBe(billed);

    const bad = await failure(client.responses.inputItems.list(second.id, { limit: 101 }));
    expect(bad.status).toBe(400);
    // The routes also answer without /v1, as the POST routes do.
    const plain = await fetch(`${f.gw.url}/responses/${second.id}`, { headers: { authorization: `Bearer ${user.key}` } });
    expect(plain.status).toBe(200);
    expect((await plain.json()).id).toBe(second.id);
    expect((await fetch(`${f.gw.url}/v1/responses/${second.id}`)).status).toBe(401);
    // The account's Resources apply, as to /v1/responses.
    const chatOnly = await f.account({ level: 312, resources: '/v1/chat/completions' });
    const refused = await failure(f.openai(chatOnly.key).responses.retrieve(second.id));
    expect(refused.status).toBe(403);
    expect(refused.error.code).toBe('resource_not_allowed');
  });
});

/** Two gateways on one PostgreSQL database: with Redis, or with the database alone, sharing what each response needs. */
for (const shared of ['Redis', 'the database'] as const) {
  describe.runIf(process.env.TEST_DATABASE_URL)(`stored response reads across two instances sharing ${shared}`, shared === 'Redis' ? needs('redis') : {}, () => {
    let pair: InstancePair;
    beforeAll(async () => { pair = await startInstancePair('stored-reads', shared === 'Redis'); });
    afterAll(async () => { await pair?.close(); });

    it('reads, lists and deletes on one instance what the other created, native and kept by the gateway', async () => {
      const { gws, mock } = pair;
      expect((await gws[0].root.put('/x-config', { PRICING })).status).toBe(200);
      for (const k of [secret('pair-a'), secret('pair-b')]) {
        expect((await gws[0].root.post('/x-keys', { Level: 313, Provider: mock.url, SecretKey: k, Status: true })).status).toBe(201);
      }
      expect((await gws[0].root.post('/x-keys', { Level: 314, Provider: mock.url, SecretKey: secret('pair-claude'), Status: true, config: ANTHROPIC })).status).toBe(201);
      for (const [level, model] of [[313, NATIVE], [314, CLAUDE]] as const) {
        const user = await insertAccount(gws[0], { credit: 50, level });
        const stranger = await insertAccount(gws[0], { credit: 50, level });
        const [creating, reading] = gws.map((g) => new OpenAI({ apiKey: user.key, baseURL: `${g.url}/v1`, maxRetries: 0 }));
        // The second instance hears of the keys and the configuration through the change feed.
        await until(async () => (await reading.responses.create({ model, input: 'ready?' }).then(() => true, () => false)));
        const { first, second } = await twoTurns(creating, model);
        const other = new OpenAI({ apiKey: stranger.key, baseURL: `${gws[1].url}/v1`, maxRetries: 0 });
        expect(await reading.responses.retrieve(second.id)).toEqual(second);
        expect(said(await allItems(reading, second.id, 2))).toEqual(['user:Start', `assistant:${(first.output[0] as any).content[0].text}`, 'user:Go on']);
        expect((await failure(other.responses.retrieve(second.id))).status).toBe(404);
        expect((await reading.responses.delete(second.id).asResponse()).status).toBe(200);
        expect((await failure(creating.responses.retrieve(second.id))).status).toBe(404);
      }
    });
  });
}
