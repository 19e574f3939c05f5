/**
 * How an OpenAI batch ends, and what it is billed, beyond the plain run (batches.test.ts):
 * a batch the provider fails at validation is billed nothing and its reservation is given back;
 * a settlement whose transaction a PostgreSQL outage breaks leaves the batch open and bills it
 * once when the database returns; 20 client reads at once while the batch ends, beside the
 * poller, write one usage record and one deduction.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI, { toFile } from 'openai';
import postgres from 'postgres';
import { sql } from 'drizzle-orm';
import { keyedUser, startProxyFixture, type ProxyFixture } from '../test-fixture';
import { freshDatabaseUrl } from '../../testing/database';
import { TcpRelay } from '../../testing/tcp-relay';
import { until } from '../../testing/until';

const MODEL = 'gpt-4o-mini';
const PRICING = JSON.stringify({ ChatPricing: { [MODEL]: { InputText: 2, OutputText: 8 } } });
const chatLine = (i: number, extra: Record<string, unknown> = {}, id = `req-${i}`) =>
  JSON.stringify({ custom_id: id, method: 'POST', url: '/v1/chat/completions', body: { model: MODEL, messages: [{ role: 'user', content: `Question ${i}` }], max_tokens: 50, ...extra } });

/** At the batch price: half of PRICING's 2 and 8 USD per million tokens. */
const batchCost = (prompt: number, completion: number) => ((prompt * 2 + completion * 8) / 1e6) * 0.5;

async function upload(client: OpenAI, lines: string[]) {
  return client.files.create({ file: await toFile(Buffer.from(`${lines.join('\n')}\n`), 'input.jsonl'), purpose: 'batch' });
}
const create = (client: OpenAI, fileId: string) => client.batches.create({ input_file_id: fileId, endpoint: '/v1/chat/completions', completion_window: '24h' });

/** Every answered line of the output, summed as the gateway must bill them. */
async function outputUsage(client: OpenAI, fileId: string) {
  const text = await (await client.files.content(fileId)).text();
  const lines = text.trim().split('\n').map((l) => JSON.parse(l));
  return { lines: lines.length, prompt: lines.reduce((s, l) => s + l.response.body.usage.prompt_tokens, 0), completion: lines.reduce((s, l) => s + l.response.body.usage.completion_tokens, 0) };
}

function reads(f: ProxyFixture) {
  const rows = <T>(q: ReturnType<typeof sql>) => f.gw.gateway.database.rows<T & Record<string, any>>(q);
  return {
    batchRow: async (id: string) => (await rows<Record<string, any>>(sql`select * from gateway_batches where id = ${id}`))[0],
    batchRecords: async (id: string) => {
      await f.gw.gateway.usage.flush();
      return rows<Record<string, any>>(sql`select * from usage_records where batch_id = ${id}`);
    },
    balanceOf: async (accountId: number) => Number((await rows<{ b: string }>(sql`select coalesce(sum(balance), 0) as b from credit_grants where account_id = ${accountId}`))[0].b),
  };
}

describe('OpenAI batch outcomes', () => {
  let f: ProxyFixture;
  let r: ReturnType<typeof reads>;
  beforeAll(async () => {
    f = await startProxyFixture({ userMinBalance: 0, batchPollMs: 50 });
    // The mock's batches move only when a test steps them.
    f.mock.batchClock({ stepMs: null });
    await f.config({ PRICING });
    r = reads(f);
  }, 60_000);
  afterAll(async () => { await f?.close(); });

  it('bills nothing for a batch the provider fails at validation, and gives its reservation back', async () => {
    const { user, client } = await keyedUser(f, 'batch-failed', { credit: 0.5 });
    // Each file holds a little over 0.32 (80,000 output tokens at 4 USD per million): one fits in 0.5, not two.
    // Two lines with one custom_id: the gateway's upload check passes it, OpenAI's validation fails the batch
    // (duplicate_custom_id, as the mock does).
    const doomed = await upload(client, [chatLine(1, { max_tokens: 40_000 }, 'same'), chatLine(2, { max_tokens: 40_000 }, 'same')]);
    const next = await upload(client, [chatLine(1, { max_tokens: 40_000 }), chatLine(2, { max_tokens: 40_000 })]);
    const before = await r.balanceOf(user.id);
    const batch = await create(client, doomed.id);
    expect(Number((await r.batchRow(batch.id)).reserved)).toBeGreaterThan(0.3);
    // Held: a second batch of the same size does not fit beside it.
    expect((await create(client, next.id).then(() => null, (e) => e))?.status).toBe(402);

    await f.mock.stepBatches(); // validation fails it
    await until(async () => (await r.batchRow(batch.id)).settled_at !== null);
    const seen = await client.batches.retrieve(batch.id);
    expect(seen.status).toBe('failed');
    expect(seen.errors?.data?.[0]?.code).toBe('duplicate_custom_id');
    const row = await r.batchRow(batch.id);
    expect(row.status).toBe('failed');
    expect(Number(row.billed)).toBe(0);
    expect(await r.batchRecords(batch.id)).toHaveLength(0);
    expect(await r.balanceOf(user.id)).toBe(before);
    // Released: the batch that did not fit beside it now does.
    await until(async () => (await create(client, next.id).then(() => true, () => false)));
  });

  it('bills a batch once when 20 client reads at once and the poller all meet its end', async () => {
    const { user, client } = await keyedUser(f, 'batch-reads', { credit: 10 });
    const file = await upload(client, [chatLine(1), chatLine(2), chatLine(3)]);
    const before = await r.balanceOf(user.id);
    const batch = await create(client, file.id);
    await f.mock.stepBatches(); // in_progress
    await f.mock.stepBatches(); // lines answered, finalizing
    const reading = Array.from({ length: 20 }, () => client.batches.retrieve(batch.id));
    const ending = f.mock.stepBatches(); // completed, while the reads are under way
    const polled = [f.gw.gateway.proxy.batchPoller.poll(), f.gw.gateway.proxy.batchPoller.poll()];
    await ending;
    const more = Array.from({ length: 20 }, () => client.batches.retrieve(batch.id));
    const answers = await Promise.all([...reading, ...more]);
    await Promise.all(polled);
    expect(answers.every((a) => a.id === batch.id)).toBe(true);
    expect(answers.filter((a) => a.status === 'completed').length).toBeGreaterThan(0);
    await until(async () => (await r.batchRow(batch.id)).settled_at !== null);
    // And once more, all at once, after it was settled.
    await Promise.all([...Array.from({ length: 20 }, () => client.batches.retrieve(batch.id)), f.gw.gateway.proxy.batchPoller.poll()]);

    const done = await client.batches.retrieve(batch.id);
    const used = await outputUsage(client, done.output_file_id!);
    const expected = batchCost(used.prompt, used.completion);
    const records = await r.batchRecords(batch.id);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ account_id: user.id, batch_lines: 3, prompt: used.prompt, completion: used.completion });
    expect(Number(records[0].credit_used)).toBeCloseTo(expected, 12);
    expect(await r.balanceOf(user.id)).toBeCloseTo(before - expected, 9);
    // One settlement won; every other reader found it settled (or waited for it).
    expect(f.gw.logs.filter((l) => l.includes('batch_settled') && l.includes(batch.id))).toHaveLength(1);
  });
});

/**
 * A real outage: the gateway's PostgreSQL goes through a relay cut between reading the batch's
 * output and committing its bill (the settlement pause test hook, the one the kill test uses).
 */
describe.runIf(process.env.TEST_DATABASE_URL)('a database outage during a batch settlement', () => {
  let f: ProxyFixture;
  let r: ReturnType<typeof reads>;
  let relay: TcpRelay;
  let direct: postgres.Sql;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const fresh = await freshDatabaseUrl();
    drop = fresh.drop;
    direct = postgres(fresh.url, { max: 1, onnotice: () => {} });
    const via = await TcpRelay.before(fresh.url);
    relay = via.relay;
    // Long enough for the test to cut the relay once the pause is logged.
    process.env.SWITCHYARD_TEST_BATCH_SETTLE_PAUSE_MS = '1500';
    try {
      f = await startProxyFixture({ userMinBalance: 0, batchPollMs: 50, databaseUrl: via.url });
    } finally {
      delete process.env.SWITCHYARD_TEST_BATCH_SETTLE_PAUSE_MS;
    }
    f.mock.batchClock({ stepMs: null });
    await f.config({ PRICING });
    r = reads(f);
  }, 60_000);
  afterAll(async () => {
    await relay?.up();
    await f?.close();
    await relay?.down();
    await direct?.end();
    await drop?.();
  });

  it('leaves the batch open while the bill cannot be committed, and bills it once when the database returns', async () => {
    const { user, client } = await keyedUser(f, 'batch-outage', { credit: 10 });
    const file = await upload(client, [chatLine(1), chatLine(2)]);
    const before = await r.balanceOf(user.id);
    const batch = await create(client, file.id);
    const logged = (what: string) => f.gw.logs.filter((l) => l.includes(what) && l.includes(batch.id)).length;

    for (let i = 0; i < 3; i++) await f.mock.stepBatches();
    // The poller has read the output and waits to commit: the database goes away.
    await until(() => logged('batch_settle_paused') > 0, 10_000);
    await relay.down();
    // The commit fails (the connection refused), and the poller says so.
    await until(() => logged('batch_poll_failed') > 0, 10_000);
    // Nothing was committed: the batch is open, with no usage and no deduction.
    const [open] = await direct`select settled_at, billed from gateway_batches where id = ${batch.id}`;
    expect(open.settled_at).toBeNull();
    expect((await direct`select request_id from usage_records where batch_id = ${batch.id}`)).toHaveLength(0);

    await relay.up();
    await until(async () => (await r.batchRow(batch.id)).settled_at !== null, 20_000);
    const done = await client.batches.retrieve(batch.id);
    const used = await outputUsage(client, done.output_file_id!);
    const expected = batchCost(used.prompt, used.completion);
    const records = await r.batchRecords(batch.id);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ account_id: user.id, batch_lines: 2, prompt: used.prompt, completion: used.completion });
    expect(Number(records[0].credit_used)).toBeCloseTo(expected, 12);
    expect(Number((await r.batchRow(batch.id)).billed)).toBeCloseTo(expected, 12);
    expect(await r.balanceOf(user.id)).toBeCloseTo(before - expected, 9);
    // The poller's later rounds bill nothing more.
    await f.gw.gateway.proxy.batchPoller.poll();
    expect(await r.batchRecords(batch.id)).toHaveLength(1);
  });
});
