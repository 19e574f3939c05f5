/**
 * Anthropic's Message Batches through a real gateway and the mock upstream with the real
 * @anthropic-ai/sdk: a batch routed by its model to an `anthropic` key, its end found by the
 * gateway's poller, billed once at half price from the results' usage, the results fetched by
 * the SDK at the gateway's own results_url; 402 for one that does not fit; a cancelled batch
 * billed for its succeeded requests; deletion only after the bill; another account's 404s.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Anthropic from '@anthropic-ai/sdk';
import { sql } from 'drizzle-orm';
import { nextLevel, secret, startProxyFixture, type ProxyFixture } from '../test-fixture';
import { insertAccount } from '../../testing/accounts';
import { until } from '../../testing/until';

const MODEL = 'claude-test-1';

let f: ProxyFixture;
beforeAll(async () => {
  f = await startProxyFixture({ userMinBalance: 0, batchPollMs: 50 });
  f.mock.batchClock({ stepMs: null });
  await f.config({ PRICING: JSON.stringify({ ChatPricing: { [MODEL]: { InputText: 3, OutputText: 15 } } }) });
}, 60_000);
afterAll(async () => { await f?.close(); });

/** A user on a Level of its own with one Anthropic key (and an OpenAI-compatible one the batch must pass over). */
async function anthropicUser(label: string, credit = 10) {
  const level = nextLevel();
  await f.addKey(level, secret(`${label}-openai`));
  await f.addKey(level, secret(label), { config: { provider_type: 'anthropic' } });
  const user = await f.account({ level, credit });
  return { user, level, client: f.anthropic(user.key) };
}

const request = (i: number, extra: Record<string, unknown> = {}) => ({
  custom_id: `req-${i}`,
  params: { model: MODEL, max_tokens: 64, messages: [{ role: 'user' as const, content: `Question ${i}` }], ...extra },
});

/** At the batch price: half of PRICING's 3 and 15 USD per million tokens. */
const batchCost = (input: number, output: number) => ((input * 3 + output * 15) / 1e6) * 0.5;

const batchRow = async (id: string) => (await f.gw.gateway.database.rows<Record<string, any>>(sql`select * from gateway_batches where id = ${id}`))[0];
const batchRecords = (id: string) => f.gw.gateway.database.rows<Record<string, any>>(sql`select * from usage_records where batch_id = ${id}`);

async function resultsOf(client: Anthropic, id: string) {
  const out: any[] = [];
  for await (const r of await client.messages.batches.results(id)) out.push(r);
  return out;
}

describe('Anthropic message batches', () => {
  it('runs a batch on an anthropic key, found ended by the poller, billed once, results read at the gateway', async () => {
    const { user, client } = await anthropicUser('mb-life');
    const batch = await client.messages.batches.create({ requests: [request(1), request(2), request(3)] });
    expect(batch).toMatchObject({ type: 'message_batch', processing_status: 'in_progress', results_url: null });
    const row = await batchRow(batch.id);
    expect(row).toMatchObject({ account_id: user.id, api: 'anthropic', model: MODEL, lines: 3, settled_at: null });
    // The Anthropic key ran it, not the OpenAI-compatible one on the same Level.
    const create = f.mock.requests.filter((r) => r.path === '/v1/messages/batches' && r.method === 'POST').at(-1)!;
    expect(create.credential).toMatch(/^sk-up-mb-life-\d+/);
    expect(create.credential).not.toMatch(/openai/);

    for (let i = 0; i < 3; i++) await f.mock.stepBatches();
    await until(async () => (await batchRow(batch.id)).settled_at !== null);

    const ended = await client.messages.batches.retrieve(batch.id);
    expect(ended.processing_status).toBe('ended');
    expect(ended.results_url).toBe(`${f.gw.url}/v1/messages/batches/${batch.id}/results`);
    const results = await resultsOf(client, batch.id);
    expect(results.map((r) => r.custom_id).sort()).toEqual(['req-1', 'req-2', 'req-3']);
    let input = 0;
    let output = 0;
    for (const r of results) {
      expect(r.result.type).toBe('succeeded');
      input += r.result.message.usage.input_tokens;
      output += r.result.message.usage.output_tokens;
    }
    const records = await batchRecords(batch.id);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ account_id: user.id, batch_lines: 3, prompt: input, completion: output, endpoint: '/v1/messages' });
    expect(Number(records[0].credit_used)).toBeCloseTo(batchCost(input, output), 12);

    // Listed with the gateway's results_url; deleted once billed; billed once whatever is read after.
    const listed = await client.messages.batches.list();
    expect(listed.data.map((b) => [b.id, b.results_url])).toEqual([[batch.id, ended.results_url]]);
    await f.gw.gateway.proxy.batchPoller.poll();
    const deleted = await client.messages.batches.delete(batch.id);
    expect(deleted).toMatchObject({ id: batch.id, type: 'message_batch_deleted' });
    expect(await batchRecords(batch.id)).toHaveLength(1);
  });

  it('refuses 402 a batch that does not fit the credit and never reaches the provider', async () => {
    const { user, client } = await anthropicUser('mb-402', 0.0001);
    const before = f.mock.requests.length;
    const err = await client.messages.batches.create({ requests: [request(1, { max_tokens: 60_000 })] }).then(() => null, (e) => e);
    expect(err?.status).toBe(402);
    expect(err.error.error.message).toMatch(/this batch would hold [\d.]+ \(its 1 lines at the batch price: up to \d+ input and 60000 output tokens\)/);
    expect(f.mock.requests.slice(before)).toHaveLength(0);
    expect(await f.gw.gateway.database.rows(sql`select id from gateway_batches where account_id = ${user.id}`)).toHaveLength(0);
  });

  it('refuses a batch naming two models', async () => {
    const { client } = await anthropicUser('mb-mixed');
    const err = await client.messages.batches.create({ requests: [request(1), request(2, { model: 'claude-other' })] }).then(() => null, (e) => e);
    expect(err?.status).toBe(400);
    expect(err.error.error.message).toMatch(/a batch runs one model/);
  });

  it('answers malformed bodies 400 in Anthropic\'s envelope, never reaching the provider', async () => {
    const { user } = await anthropicUser('mb-fuzz');
    const before = f.mock.requests.length;
    const bodies = ['{}', '{"requests":[]}', '{"requests":{}}', '{"requests":[1]}', '{"requests":[{"custom_id":"a"}]}', '{"requests":[{"custom_id":"a","params":[]}]}',
      '{"requests":[{"custom_id":7,"params":{"model":"x"}}]}', '{"requests":[{"custom_id":"a","params":{"model":""}}]}', '{"requests":[{"custom_id":"a","params":{}}]}', 'not json', '[]'];
    for (const body of bodies) {
      const r = await fetch(`${f.gw.url}/v1/messages/batches`, { method: 'POST', headers: { 'x-api-key': user.key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' }, body });
      expect(r.status, body).toBe(400);
      const j = await r.json();
      expect(j.type, body).toBe('error');
      expect(j.error.type, body).toBe('invalid_request_error');
    }
    expect(f.mock.requests.slice(before)).toHaveLength(0);
  });

  it('bills a batch cancelled mid-run for its succeeded requests only', async () => {
    const { client } = await anthropicUser('mb-cancel');
    f.mock.batchClock({ stepMs: null, linesPerStep: 2 });
    try {
      const batch = await client.messages.batches.create({ requests: [request(1), request(2), request(3), request(4), request(5)] });
      await f.mock.stepBatches();
      const canceling = await client.messages.batches.cancel(batch.id);
      expect(canceling.processing_status).toBe('canceling');
      for (let i = 0; i < 3; i++) await f.mock.stepBatches();
      await until(async () => (await batchRow(batch.id)).settled_at !== null);
      const results = await resultsOf(client, batch.id);
      const succeeded = results.filter((r) => r.result.type === 'succeeded');
      expect(succeeded.length).toBeGreaterThan(0);
      expect(succeeded.length).toBeLessThan(5);
      const input = succeeded.reduce((s, r) => s + r.result.message.usage.input_tokens, 0);
      const output = succeeded.reduce((s, r) => s + r.result.message.usage.output_tokens, 0);
      const records = await batchRecords(batch.id);
      expect(records).toHaveLength(1);
      expect(records[0].batch_lines).toBe(succeeded.length);
      expect(Number(records[0].credit_used)).toBeCloseTo(batchCost(input, output), 12);
    } finally {
      f.mock.batchClock({ stepMs: null, linesPerStep: Infinity });
    }
  });

  it("answers another account's batch as one that does not exist", async () => {
    const { user, client, level } = await anthropicUser('mb-owner');
    const sibling = await insertAccount(f.gw, { credit: 10, level });
    const child = await insertAccount(f.gw, { credit: 10, level, parent: user });
    const batch = await client.messages.batches.create({ requests: [request(1)] });
    for (const other of [sibling, child]) {
      const them = f.anthropic(other.key);
      for (const call of [() => them.messages.batches.retrieve(batch.id), () => them.messages.batches.cancel(batch.id), () => them.messages.batches.delete(batch.id), () => them.messages.batches.results(batch.id)]) {
        const err = await call().then(() => null, (e) => e);
        expect(err?.status).toBe(404);
        expect(err.error.error.message).toBe(`No message batch found with id '${batch.id}'.`);
      }
      expect((await them.messages.batches.list()).data).toEqual([]);
    }
    expect((await client.messages.batches.retrieve(batch.id)).id).toBe(batch.id);
  });
});
