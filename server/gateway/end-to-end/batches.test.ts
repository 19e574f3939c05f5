/**
 * OpenAI's Batch API through a real gateway and the mock upstream with the real openai SDK:
 * upload, create, the end found by the gateway's poller without any client polling, the exact
 * charge (the mock's per-line usage at half the price), the output downloaded; 402 for a batch
 * that does not fit (never reaching the provider); a cancelled batch billed for its completed
 * lines only; another account's 404s and lists.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI, { toFile } from 'openai';
import { sql } from 'drizzle-orm';
import { keyedUser, startProxyFixture, type ProxyFixture } from '../test-fixture';
import { insertAccount } from '../../testing/accounts';
import { until } from '../../testing/until';
import { counterKeys } from '../admission/store';

let f: ProxyFixture;
beforeAll(async () => {
  f = await startProxyFixture({ userMinBalance: 0, batchPollMs: 50 });
  // The mock's batches move only when a test steps them.
  f.mock.batchClock({ stepMs: null });
  await f.config({ PRICING: JSON.stringify({ ChatPricing: { [MODEL]: { InputText: 2, OutputText: 8 } } }) });
}, 60_000);
afterAll(async () => { await f?.close(); });

const MODEL = 'gpt-4o-mini';
const chatLine = (i: number, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ custom_id: `req-${i}`, method: 'POST', url: '/v1/chat/completions', body: { model: MODEL, messages: [{ role: 'user', content: `Question ${i}` }], max_tokens: 50, ...extra } });
const jsonl = (lines: string[]) => Buffer.from(`${lines.join('\n')}\n`);

/** At the batch price: half of PRICING's 2 and 8 USD per million tokens. */
const batchCost = (prompt: number, completion: number) => ((prompt * 2 + completion * 8) / 1e6) * 0.5;

const batchRow = async (id: string) => (await f.gw.gateway.database.rows<Record<string, any>>(sql`select * from gateway_batches where id = ${id}`))[0];
const batchRecords = async (id: string) => {
  await f.gw.gateway.usage.flush();
  return f.gw.gateway.database.rows<Record<string, any>>(sql`select * from usage_records where batch_id = ${id}`);
};
const balanceOf = async (accountId: number) => Number((await f.gw.gateway.database.rows<{ b: string }>(sql`select coalesce(sum(balance), 0) as b from credit_grants where account_id = ${accountId}`))[0].b);

/** The mock's answers, summed as the gateway must bill them: every succeeded line of the output. */
async function outputUsage(client: OpenAI, fileId: string) {
  const text = await (await client.files.content(fileId)).text();
  const lines = text.trim().split('\n').map((l) => JSON.parse(l));
  let prompt = 0;
  let completion = 0;
  for (const l of lines) {
    prompt += l.response.body.usage.prompt_tokens;
    completion += l.response.body.usage.completion_tokens;
  }
  return { lines: lines.length, prompt, completion };
}

async function upload(client: OpenAI, lines: string[]) {
  return client.files.create({ file: await toFile(jsonl(lines), 'input.jsonl'), purpose: 'batch' });
}

describe('OpenAI batches', () => {
  it('runs a batch found ended by the poller, billed once at half price, with its output downloadable', async () => {
    const { user, client } = await keyedUser(f, 'batch-life', { credit: 10 });
    const file = await upload(client, [chatLine(1), chatLine(2), chatLine(3)]);
    const before = await balanceOf(user.id);
    const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    expect(batch).toMatchObject({ object: 'batch', status: 'validating', input_file_id: file.id });
    const held = await batchRow(batch.id);
    expect(held).toMatchObject({ account_id: user.id, api: 'openai', model: MODEL, lines: 3, settled_at: null });
    expect(Number(held.reserved)).toBeGreaterThan(0);

    // The provider runs it to the end; no client asks about it meanwhile.
    for (let i = 0; i < 4; i++) await f.mock.stepBatches();
    await until(async () => (await batchRow(batch.id)).settled_at !== null);

    const done = await client.batches.retrieve(batch.id);
    expect(done.status).toBe('completed');
    expect(done.output_file_id).toBeTruthy();
    const used = await outputUsage(client, done.output_file_id!);
    expect(used.lines).toBe(3);
    const expected = batchCost(used.prompt, used.completion);
    const records = await batchRecords(batch.id);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ account_id: user.id, model: MODEL, batch_lines: 3, prompt: used.prompt, completion: used.completion, endpoint: '/v1/chat/completions' });
    expect(Number(records[0].credit_used)).toBeCloseTo(expected, 12);
    const row = await batchRow(batch.id);
    expect(Number(row.billed)).toBeCloseTo(expected, 12);
    expect(row.status).toBe('completed');
    expect(await balanceOf(user.id)).toBeCloseTo(before - expected, 9);

    // Reading it again (client polls, the poller's next rounds) bills nothing more.
    await client.batches.retrieve(batch.id);
    await f.gw.gateway.proxy.batchPoller.poll();
    expect(await batchRecords(batch.id)).toHaveLength(1);
    // The reservation is given back: a call may spend the rest.
    const admission = f.gw.gateway.proxy.admission;
    await until(async () => {
      const r = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 }).then(() => true, () => false);
      return r;
    });
    expect(admission.open).toBe(0);
  });

  it('refuses 402 a batch that does not fit the credit, saying what it would hold, and never reaches the provider', async () => {
    const { user, client } = await keyedUser(f, 'batch-402', { credit: 0.0001 });
    // No max_tokens: each line holds the model's whole output limit.
    const file = await upload(client, [chatLine(1, { max_tokens: undefined }), chatLine(2, { max_tokens: undefined })]);
    const before = f.mock.requests.length;
    const err = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' }).then(() => null, (e) => e);
    expect(err?.status).toBe(402);
    expect(err.error.code).toBe('insufficient_balance');
    expect(err.error.message).toMatch(/this batch would hold [\d.]+ \(its 2 lines at the batch price: up to \d+ input and \d+ output tokens\)/);
    expect(f.mock.requests.slice(before).filter((r) => r.path.includes('/batches'))).toHaveLength(0);
    expect((await f.gw.gateway.database.rows(sql`select id from gateway_batches where account_id = ${user.id}`))).toHaveLength(0);
  });

  it('holds the reservation until the batch is settled: a second batch that fits alone does not fit beside the first', async () => {
    const { client } = await keyedUser(f, 'batch-hold', { credit: 0.5 });
    const lines = [chatLine(1, { max_tokens: 40_000 }), chatLine(2, { max_tokens: 40_000 })];
    const a = await upload(client, lines);
    const b = await upload(client, lines);
    // Each holds a little over 0.32 (80,000 output tokens at 4 USD per million): one fits in 0.5, not two.
    const first = await client.batches.create({ input_file_id: a.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const second = await client.batches.create({ input_file_id: b.id, endpoint: '/v1/chat/completions', completion_window: '24h' }).then(() => null, (e) => e);
    expect(second?.status).toBe(402);
    // Read again from the database (as after a restart or on another instance), the hold is still there.
    f.gw.gateway.proxy.admission.invalidate(null);
    const again = await client.batches.create({ input_file_id: b.id, endpoint: '/v1/chat/completions', completion_window: '24h' }).then(() => null, (e) => e);
    expect(again?.status).toBe(402);
    // Once the first is settled (a few cents at most), what it held is given back.
    for (let i = 0; i < 4; i++) await f.mock.stepBatches();
    await until(async () => (await batchRow(first.id)).settled_at !== null);
    await until(async () => (await client.batches.create({ input_file_id: b.id, endpoint: '/v1/chat/completions', completion_window: '24h' }).then(() => true, () => false)));
  });

  it('bills a batch cancelled mid-run for its completed lines only', async () => {
    const { user, client } = await keyedUser(f, 'batch-cancel', { credit: 10 });
    f.mock.batchClock({ stepMs: null, linesPerStep: 2 });
    try {
      const file = await upload(client, [chatLine(1), chatLine(2), chatLine(3), chatLine(4), chatLine(5)]);
      const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
      await f.mock.stepBatches(); // validated
      await f.mock.stepBatches(); // two lines answered
      const cancelling = await client.batches.cancel(batch.id);
      expect(cancelling.status).toBe('cancelling');
      for (let i = 0; i < 3; i++) await f.mock.stepBatches();
      await until(async () => (await batchRow(batch.id)).settled_at !== null);
      const done = await client.batches.retrieve(batch.id);
      expect(done.status).toBe('cancelled');
      const used = await outputUsage(client, done.output_file_id!);
      expect(used.lines).toBe(2);
      const records = await batchRecords(batch.id);
      expect(records).toHaveLength(1);
      expect(records[0].batch_lines).toBe(2);
      expect(Number(records[0].credit_used)).toBeCloseTo(batchCost(used.prompt, used.completion), 12);
      expect(records[0].account_id).toBe(user.id);
    } finally {
      f.mock.batchClock({ stepMs: null, linesPerStep: Infinity });
    }
  });

  it('bills an expired batch for the lines answered within its window', async () => {
    const { client } = await keyedUser(f, 'batch-expired', { credit: 10 });
    f.mock.batchClock({ stepMs: null, linesPerStep: 1 });
    try {
      const file = await upload(client, [chatLine(1), chatLine(2), chatLine(3)]);
      const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
      await f.mock.stepBatches(); // validated
      await f.mock.stepBatches(); // one line answered
      await f.mock.expireBatch(batch.id);
      await until(async () => (await batchRow(batch.id)).settled_at !== null);
      const done = await client.batches.retrieve(batch.id);
      expect(done.status).toBe('expired');
      const used = await outputUsage(client, done.output_file_id!);
      expect(used.lines).toBe(1);
      const records = await batchRecords(batch.id);
      expect(records).toHaveLength(1);
      expect(records[0].batch_lines).toBe(1);
      expect(Number(records[0].credit_used)).toBeCloseTo(batchCost(used.prompt, used.completion), 12);
    } finally {
      f.mock.batchClock({ stepMs: null, linesPerStep: Infinity });
    }
  });

  it("answers another account's batch as one that does not exist, and lists only the caller's own", async () => {
    const { user, client, level } = await keyedUser(f, 'batch-owner', { credit: 10 });
    const sibling = await insertAccount(f.gw, { credit: 10, level });
    const child = await insertAccount(f.gw, { credit: 10, level, parent: user });
    const file = await upload(client, [chatLine(1)]);
    const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const mine = await client.batches.list();
    expect(mine.data.map((b) => b.id)).toEqual([batch.id]);
    for (const other of [sibling, child]) {
      const them = f.openai(other.key);
      const missing = await them.batches.retrieve('batch_doesnotexist').then(() => null, (e) => e);
      const theirs = await them.batches.retrieve(batch.id).then(() => null, (e) => e);
      expect(theirs.status).toBe(404);
      expect(missing.status).toBe(404);
      expect(theirs.error.message).toBe(`No batch found with id '${batch.id}'.`);
      expect((await them.batches.cancel(batch.id).then(() => null, (e) => e)).status).toBe(404);
      expect((await them.batches.list()).data).toEqual([]);
      // Their own batch cannot name this account's file either.
      const named = await them.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' }).then(() => null, (e) => e);
      expect(named.status).toBe(404);
    }
    // The parent's view is its own too (the admin API lists a subtree).
    const parentSees = await f.openai(f.gw.rootKey).batches.retrieve(batch.id).then(() => null, (e) => e);
    expect(parentSees.status).toBe(404);
    expect((await client.batches.retrieve(batch.id)).id).toBe(batch.id);
  });

  it('counts a settled batch on the token limits (TPD), never on the request limits', async () => {
    const { user, client } = await keyedUser(f, 'batch-tpd', { credit: 10, tpd: 1_000_000, rpd: 1 });
    const file = await upload(client, [chatLine(1), chatLine(2)]);
    // RPD of 1: creating, reading and listing batches use no request slot.
    const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    await client.batches.retrieve(batch.id);
    for (let i = 0; i < 4; i++) await f.mock.stepBatches();
    await until(async () => (await batchRow(batch.id)).settled_at !== null);
    const [record] = await batchRecords(batch.id);
    const tokens = record.prompt + record.completion;
    const tpd = { key: counterKeys.rate(user.ownerId, user.id, 'tpd'), name: 'TPD', kind: 'tokens' as const, windowMs: 86_400_000, limit: 1_000_000 };
    // A day's window drains 1,000,000 tokens a day: what was counted is still there, less the few ms since.
    await until(() => f.gw.gateway.proxy.admission.rateUsed(tpd, Date.now()) > 0);
    const used = f.gw.gateway.proxy.admission.rateUsed(tpd, Date.now());
    expect(used).toBeLessThanOrEqual(tokens);
    expect(used).toBeGreaterThan(tokens - 5);
    // The one request of the day is still there for a call.
    expect((await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 })).choices).toHaveLength(1);
  });

  it('gives back the reservation of a batch its provider never ended, past its window, with an operation-log entry', async () => {
    const { user, client } = await keyedUser(f, 'batch-expiry', { credit: 10 });
    const file = await upload(client, [chatLine(1)]);
    const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    // The provider never moves it; its window (and the margin) is over.
    await f.gw.gateway.database.rows(sql`update gateway_batches set expires_at = now() - interval '1 second' where id = ${batch.id}`);
    await until(async () => (await batchRow(batch.id)).settled_at !== null);
    const row = await batchRow(batch.id);
    expect(Number(row.billed)).toBe(0);
    expect(await batchRecords(batch.id)).toHaveLength(0);
    const logs = await f.gw.gateway.database.rows<Record<string, any>>(sql`select * from operation_logs where action = 'batch_reservation_released' and target_id = ${user.id}`);
    expect(logs).toHaveLength(1);
    expect(JSON.parse(logs[0].details)).toMatchObject({ batch: batch.id, model: MODEL, by: 'gateway' });
  });

  it('counts a batch against the spend caps: a DailyLimit it would pass is refused 402 at create', async () => {
    const { client } = await keyedUser(f, 'batch-cap', { credit: 10, dailyLimit: 0.01 });
    const file = await upload(client, [chatLine(1, { max_tokens: 10_000 }), chatLine(2, { max_tokens: 10_000 })]);
    const err = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' }).then(() => null, (e) => e);
    expect(err?.status).toBe(402);
    expect(err.error.code).toBe('daily_limit_reached');
    expect(err.error.message).toMatch(/this batch would hold/);
  });

  it('answers IDs of any shape as batches that do not exist, in the error envelope', async () => {
    const { client } = await keyedUser(f, 'batch-ids', { credit: 1 });
    for (const id of ['x', 'batch_'.padEnd(300, 'a'), 'batch%2F..%2Fx', "batch_'; drop table gateway_batches; --", 'батч', '%00']) {
      const r = await fetch(`${f.gw.url}/v1/batches/${encodeURIComponent(id)}`, { headers: { authorization: `Bearer ${(client as any).apiKey}` } });
      expect(r.status, id).toBe(404);
      expect((await r.json()).error.code).toBe('not_found');
    }
    const bad = await client.batches.create({ input_file_id: 'file-x', endpoint: '/v1/moderations' as any, completion_window: '24h' }).then(() => null, (e) => e);
    expect(bad.status).toBe(400);
    const noFile = await client.batches.create({ input_file_id: 'file-nothere', endpoint: '/v1/chat/completions', completion_window: '24h' }).then(() => null, (e) => e);
    expect(noFile.status).toBe(404);
    const list = await client.batches.list({ limit: 0 } as any).then(() => null, (e) => e);
    expect(list.status).toBe(400);
    // Every route also answers without /v1.
    const alias = await fetch(`${f.gw.url}/batches`, { headers: { authorization: `Bearer ${(client as any).apiKey}` } });
    expect(alias.status).toBe(200);
    expect(await alias.json()).toMatchObject({ object: 'list', data: [], has_more: false });
    const unauthenticated = await fetch(`${f.gw.url}/v1/batches`);
    expect(unauthenticated.status).toBe(401);
  });

  it('lists and reads the batches of a subtree through the admin API, with what each holds and was billed', async () => {
    const { user, client, level } = await keyedUser(f, 'batch-admin', { credit: 10 });
    const child = await insertAccount(f.gw, { credit: 10, level, parent: user });
    const sibling = await insertAccount(f.gw, { credit: 10, level });
    const childClient = f.openai(child.key);
    const file = await upload(childClient, [chatLine(1), chatLine(2)]);
    const batch = await childClient.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const open = await f.gw.as(user.key).get('/dashboard/batches');
    expect(open.status).toBe(200);
    expect(open.body.data).toHaveLength(1);
    expect(open.body.data[0]).toMatchObject({ id: batch.id, account_id: child.id, api: 'openai', model: MODEL, lines: 2, billed: null, settled_at: null });
    expect(open.body.data[0].reserved).toBeGreaterThan(0);
    expect((await f.gw.as(user.key).get('/dashboard/batches?status=settled')).body.data).toEqual([]);
    for (let i = 0; i < 4; i++) await f.mock.stepBatches();
    await until(async () => (await batchRow(batch.id)).settled_at !== null);
    const one = await f.gw.as(user.key).get(`/dashboard/batches/${batch.id}`);
    expect(one.status).toBe(200);
    const [record] = await batchRecords(batch.id);
    expect(one.body).toMatchObject({ id: batch.id, status: 'completed', completed_lines: 2, billed: Number(record.credit_used) });
    expect(one.body.settled_at).not.toBeNull();
    // Root sees it in its tree; a sibling, neither listed nor read.
    expect((await f.gw.root.get(`/dashboard/batches/${batch.id}`)).status).toBe(200);
    expect((await f.gw.as(sibling.key).get(`/dashboard/batches/${batch.id}`)).status).toBe(404);
    expect((await f.gw.as(sibling.key).get('/dashboard/batches')).body.data).toEqual([]);
    expect((await f.gw.as(child.key).get(`/dashboard/batches?user=${user.id}`)).status).toBe(403);
    void client;
  });
});
