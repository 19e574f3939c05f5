import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI, { toFile } from 'openai';
import { Redis } from 'ioredis';
import { HttpClient } from '../testing/http';
import { spawnServer, type RunningServer } from '../testing/spawn';
import { freshDatabaseUrl } from '../testing/database';
import { startMockUpstream, type MockUpstream } from '../testing/mock-upstream';
import { needs, testRedisUrl } from '../testing/requirements';
import { generateAccountKey } from '../adapters/security/crypto';
import { until } from '../testing/until';

/**
 * A provider batch is billed exactly once whoever finds its end (issue #32): three gateway
 * processes on one PostgreSQL database and Redis, each polling the same open batch, all three
 * reading its output at once (the settle pauses before committing, so they race to commit); and
 * a process killed (SIGKILL) between reading the output and committing the bill, then started
 * again: one usage record, one deduction, in both. Two batches created at once on two instances
 * with room for one: one is created, and its hold is seen on every instance until its bill.
 */
const MODEL = 'gpt-4o-mini';
const SECRET = 'sk-batches-across-instances-0123456789';
const line = (i: number) => JSON.stringify({ custom_id: `r${i}`, method: 'POST', url: '/v1/chat/completions', body: { model: MODEL, messages: [{ role: 'user', content: `Q${i}` }], max_tokens: 20 } });
const INPUT = Buffer.from(`${[1, 2, 3].map(line).join('\n')}\n`);

interface Setup { db: { url: string; drop: () => Promise<void> }; mock: MockUpstream; rootKey: string; env: Record<string, string> }

async function setUp(label: string, extra: Record<string, string>): Promise<Setup> {
  const db = await freshDatabaseUrl();
  const mock = await startMockUpstream({ batchStepMs: null });
  const rootKey = generateAccountKey();
  const env = { DATABASE_URL: db.url, ROOT_KEY: rootKey, MASTER_KEY: `switchyard-${label}-master-key`, BATCH_POLL_MS: '50', USER_MIN_BALANCE: '0', ...extra };
  return { db, mock, rootKey, env };
}

/** A user with credit, a file of three lines and a batch created on `server`; the mock then runs it to its end. */
async function endedBatch(s: Setup, server: RunningServer) {
  const admin = new HttpClient(server.url, s.rootKey);
  const user = (await admin.ok('POST', '/x-users', { Name: 'batcher', Email: 'batcher@example.test', CreditGranted: 5 })).User as { ID: number; SecretKey: string };
  const client = new OpenAI({ apiKey: user.SecretKey, baseURL: `${server.url}/v1`, maxRetries: 0 });
  const file = await client.files.create({ file: await toFile(INPUT, 'in.jsonl'), purpose: 'batch' });
  const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
  for (let i = 0; i < 4; i++) await s.mock.stepBatches();
  return { admin, user, client, batch };
}

/** The batch's usage records and the account's balance, through the admin API. */
async function billOf(admin: HttpClient, userId: number, batchId: string) {
  const page = (await admin.ok('GET', `/dashboard/requests?user=${userId}`)) as { data: { batch_id?: string; batch_lines?: number; credit_used: number }[] };
  const records = page.data.filter((r) => r.batch_id === batchId);
  const b = (await admin.ok('GET', `/dashboard/batches/${batchId}`)) as { settled_at: string | null; billed: number | null };
  return { records, settled: b.settled_at !== null, billed: b.billed };
}

const occurrences = (text: string, what: string) => text.split(what).length - 1;

describe.runIf(process.env.TEST_DATABASE_URL)('a batch billed once across instances and restarts (PostgreSQL)', () => {
  describe('three instances polling the same batch (PostgreSQL + Redis)', needs('redis'), () => {
    const prefix = `test:batches:${process.pid}:${Date.now()}:`;
    const servers: RunningServer[] = [];
    let s: Setup;
    beforeAll(async () => {
      // Every instance reads the output, then waits before committing: all three race to the commit.
      s = await setUp('batches-3', { REDIS_URL: testRedisUrl(), REDIS_PREFIX: prefix, SWITCHYARD_TEST_BATCH_SETTLE_PAUSE_MS: '500' });
      servers.push(await spawnServer(s.env, 90_000));
      await new HttpClient(servers[0].url, s.rootKey).ok('POST', '/x-keys', { Level: 1, Provider: s.mock.url, SecretKey: SECRET, Status: true });
      servers.push(...await Promise.all([spawnServer(s.env, 90_000), spawnServer(s.env, 90_000)]));
    }, 180_000);
    afterAll(async () => {
      for (const x of servers) await x.stop();
      await s?.mock.close();
      const r = new Redis(testRedisUrl());
      const keys = await r.keys(`${prefix}*`);
      if (keys.length) await r.del(...keys);
      r.disconnect();
      await s?.db.drop();
    }, 60_000);

    it('three pollers find the end, one bill is written', async () => {
      const { admin, user, batch } = await endedBatch(s, servers[1]);
      await until(async () => (await billOf(admin, user.ID, batch.id)).settled, 30_000);
      // Every instance got as far as the commit: the race was real.
      await until(() => servers.filter((x) => x.stdout().includes('batch_settle_paused')).length === 3, 30_000);
      // Further rounds of every poller (and a client's read) change nothing.
      await new Promise((r) => setTimeout(r, 600));
      const bill = await billOf(admin, user.ID, batch.id);
      expect(bill.records).toHaveLength(1);
      expect(bill.records[0].batch_lines).toBe(3);
      expect(bill.records[0].credit_used).toBeCloseTo(bill.billed!, 12);
      expect(servers.reduce((n, x) => n + occurrences(x.stdout(), '"batch_settled"'), 0)).toBe(1);
      const [info] = (await admin.ok('GET', `/x-users/${user.ID}`)) as { Balance: number }[];
      // Balance is shown to the micro-dollar.
      expect(info.Balance).toBeCloseTo(5 - bill.billed!, 5);
    }, 90_000);

    it('two batches created at once on two instances, room for one: exactly one is created; the hold is seen everywhere until the bill', async () => {
      const admin = new HttpClient(servers[0].url, s.rootKey);
      // Each batch holds its 3 lines' worst case: 20 output tokens and a few hundred input tokens each, at half of gpt-4o-mini's price.
      const probe = (await admin.ok('POST', '/x-users', { Name: 'prober', Email: 'prober@example.test', CreditGranted: 5 })).User as { SecretKey: string };
      const probeClient = new OpenAI({ apiKey: probe.SecretKey, baseURL: `${servers[0].url}/v1`, maxRetries: 0 });
      const probeFile = await probeClient.files.create({ file: await toFile(INPUT, 'in.jsonl'), purpose: 'batch' });
      const probeBatch = await probeClient.batches.create({ input_file_id: probeFile.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
      const held = ((await admin.ok('GET', `/dashboard/batches/${probeBatch.id}`)) as { reserved: number }).reserved;
      expect(held).toBeGreaterThan(0);
      const user = (await admin.ok('POST', '/x-users', { Name: 'racer', Email: 'racer@example.test', CreditGranted: Number((held * 1.5).toFixed(6)) })).User as { ID: number; SecretKey: string };
      const clients = servers.map((x) => new OpenAI({ apiKey: user.SecretKey, baseURL: `${x.url}/v1`, maxRetries: 0 }));
      const files = await Promise.all([0, 1].map(async () => clients[0].files.create({ file: await toFile(INPUT, 'in.jsonl'), purpose: 'batch' })));
      const created = await Promise.all([0, 1].map((i) => clients[i].batches.create({ input_file_id: files[i].id, endpoint: '/v1/chat/completions', completion_window: '24h' })
        .then((b) => b.id, (e) => `${e.status} ${e.error?.code}`)));
      expect(created.filter((x) => x === '402 insufficient_balance')).toHaveLength(1);
      const id = created.find((x) => x.startsWith('batch_'))!;
      const left = files[created.indexOf(id) === 0 ? 1 : 0];
      // The third instance sees the hold too.
      const third = await clients[2].batches.create({ input_file_id: left.id, endpoint: '/v1/chat/completions', completion_window: '24h' }).then(() => null, (e) => e);
      expect(third?.status).toBe(402);
      // Once billed (a fraction of the hold), the other fits, on any instance.
      for (let i = 0; i < 4; i++) await s.mock.stepBatches();
      await until(async () => (await billOf(admin, user.ID, id)).settled, 30_000);
      await until(async () => clients[2].batches.create({ input_file_id: left.id, endpoint: '/v1/chat/completions', completion_window: '24h' }).then(() => true, () => false), 30_000);
    }, 90_000);
  });

  describe('a process killed between reading the output and committing the bill', () => {
    let s: Setup;
    let server: RunningServer | undefined;
    beforeAll(async () => {
      s = await setUp('batches-kill', { SWITCHYARD_TEST_BATCH_SETTLE_PAUSE_MS: '60000' });
    }, 60_000);
    afterAll(async () => {
      if (server && server.child.exitCode === null) await server.stop('SIGKILL');
      await s?.mock.close();
      await s?.db.drop();
    }, 60_000);

    it('bills the batch once after the restart', async () => {
      server = await spawnServer(s.env, 90_000);
      await new HttpClient(server.url, s.rootKey).ok('POST', '/x-keys', { Level: 1, Provider: s.mock.url, SecretKey: SECRET, Status: true });
      const { user, batch } = await endedBatch(s, server);
      // The output is read; the bill waits to be committed: kill -9 now.
      await until(() => server!.stdout().includes('batch_settle_paused'), 30_000);
      server.child.kill('SIGKILL');
      await new Promise((r) => server!.child.once('exit', r));
      server = await spawnServer({ ...s.env, SWITCHYARD_TEST_BATCH_SETTLE_PAUSE_MS: '' }, 90_000);
      const admin = new HttpClient(server.url, s.rootKey);
      expect((await billOf(admin, user.ID, batch.id)).records.length).toBeLessThanOrEqual(1);
      await until(async () => (await billOf(admin, user.ID, batch.id)).settled, 30_000);
      await new Promise((r) => setTimeout(r, 300));
      const bill = await billOf(admin, user.ID, batch.id);
      expect(bill.records).toHaveLength(1);
      expect(bill.records[0].batch_lines).toBe(3);
      expect(bill.records[0].credit_used).toBeGreaterThan(0);
      expect(bill.records[0].credit_used).toBeCloseTo(bill.billed!, 12);
    }, 120_000);
  });
});
