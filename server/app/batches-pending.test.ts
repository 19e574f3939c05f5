import { afterEach, describe, expect, it } from 'vitest';
import OpenAI, { toFile } from 'openai';
import postgres from 'postgres';
import { HttpClient } from '../testing/http';
import { spawnServer, type RunningServer } from '../testing/spawn';
import { freshDatabaseUrl } from '../testing/database';
import { startMockUpstream, type MockUpstream } from '../testing/mock-upstream';
import { generateAccountKey } from '../adapters/security/crypto';
import { until } from '../testing/until';

/**
 * A batch's row is committed before the provider is asked (gateway/batches/pending.ts), under a
 * pending ID that the OpenAI batch carries in its metadata: a process killed (SIGKILL) after the
 * provider accepted the batch but before the row took the provider's ID is found again after the
 * restart — adopted, then billed once; a pending row whose create never reached the provider is
 * released, its hold given back, with an operation-log entry.
 */
const MODEL = 'gpt-4o-mini';
const SECRET = 'sk-batches-pending-0123456789abcdef';
const line = (i: number) => JSON.stringify({ custom_id: `r${i}`, method: 'POST', url: '/v1/chat/completions', body: { model: MODEL, messages: [{ role: 'user', content: `Q${i}` }], max_tokens: 20 } });
const INPUT = Buffer.from(`${[1, 2, 3].map(line).join('\n')}\n`);

describe.runIf(process.env.TEST_DATABASE_URL)('a batch whose row has not yet taken the provider\'s ID (PostgreSQL, real processes)', () => {
  let db: { url: string; drop: () => Promise<void> };
  let mock: MockUpstream;
  let server: RunningServer | undefined;
  let sql: ReturnType<typeof postgres> | undefined;
  const rootKey = generateAccountKey();
  const env = () => ({ DATABASE_URL: db.url, ROOT_KEY: rootKey, MASTER_KEY: 'switchyard-batches-pending-master-key', BATCH_POLL_MS: '50', USER_MIN_BALANCE: '0' });

  async function start(extra: Record<string, string>) {
    db = await freshDatabaseUrl();
    mock = await startMockUpstream({ batchStepMs: null });
    server = await spawnServer({ ...env(), ...extra }, 90_000);
    const admin = new HttpClient(server.url, rootKey);
    await admin.ok('POST', '/x-keys', { Level: 1, Provider: mock.url, SecretKey: SECRET, Status: true });
    const user = (await admin.ok('POST', '/x-users', { Name: 'batcher', Email: 'batcher@example.test', CreditGranted: 5 })).User as { ID: number; SecretKey: string };
    const client = new OpenAI({ apiKey: user.SecretKey, baseURL: `${server.url}/v1`, maxRetries: 0 });
    const file = await client.files.create({ file: await toFile(INPUT, 'in.jsonl'), purpose: 'batch' });
    sql = postgres(db.url, { max: 1, onnotice: () => {} });
    return { admin, user, client, file };
  }

  const balanceOf = async (admin: HttpClient, id: number) => ((await admin.ok('GET', `/x-users/${id}`)) as { Balance: number }[])[0].Balance;
  const rowsOf = (accountId: number) => sql!<{ id: string; status: string; reserved: number; billed: number | null; settled_at: Date | null }[]>`
    select id, status, reserved, billed, settled_at from gateway_batches where account_id = ${accountId}`;
  const atProvider = () => new OpenAI({ apiKey: SECRET, baseURL: `${mock.url}/v1`, maxRetries: 0 }).batches.list().then((p) => p.data);

  afterEach(async () => {
    if (server && server.child.exitCode === null) await server.stop('SIGKILL');
    server = undefined;
    await sql?.end();
    sql = undefined;
    await mock?.close();
    await db?.drop();
  }, 60_000);

  it('killed between the provider\'s accept and the row\'s update: adopted after the restart and billed once', async () => {
    // This process waits once the provider has the batch; its own poller leaves the pending row alone.
    const { user, client, file } = await start({ SWITCHYARD_TEST_BATCH_CREATE_PAUSE_MS: '60000', SWITCHYARD_TEST_BATCH_PENDING_GRACE_MS: '600000' });
    const creating = client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h', metadata: { run: 'nightly' } }).catch((e) => e);
    await until(() => server!.stdout().includes('batch_create_paused'), 30_000);
    const [pending] = await rowsOf(user.ID);
    expect(pending.id).toMatch(/^pending_/);
    expect(pending.status).toBe('creating');
    expect(Number(pending.reserved)).toBeGreaterThan(0);
    // The provider's batch carries the pending ID beside the client's metadata.
    const [sent] = await atProvider();
    expect(sent.metadata).toEqual({ run: 'nightly', switchyard_batch: pending.id });
    server!.child.kill('SIGKILL');
    await new Promise((r) => server!.child.once('exit', r));
    expect((await creating) instanceof Error).toBe(true);

    server = await spawnServer({ ...env(), SWITCHYARD_TEST_BATCH_PENDING_GRACE_MS: '0' }, 90_000);
    const restarted = new HttpClient(server.url, rootKey);
    await until(async () => (await rowsOf(user.ID)).some((r) => r.id === sent.id), 30_000);
    const rows = await rowsOf(user.ID);
    expect(rows.map((r) => r.id)).toEqual([sent.id]);
    expect(server.stdout()).toContain('batch_pending_adopted');
    // The client sees the batch under the provider's ID, its own metadata only.
    const again = new OpenAI({ apiKey: user.SecretKey, baseURL: `${server.url}/v1`, maxRetries: 0 });
    expect((await again.batches.retrieve(sent.id)).metadata).toEqual({ run: 'nightly' });
    expect((await again.batches.list()).data.map((b) => [b.id, b.metadata])).toEqual([[sent.id, { run: 'nightly' }]]);

    for (let i = 0; i < 4; i++) await mock.stepBatches();
    await until(async () => (await rowsOf(user.ID))[0].settled_at !== null, 30_000);
    await new Promise((r) => setTimeout(r, 300));
    const [settled] = await rowsOf(user.ID);
    const records = await sql!<{ credit_used: number; batch_lines: number }[]>`select credit_used, batch_lines from usage_records where batch_id = ${sent.id}`;
    expect(records).toHaveLength(1);
    expect(records[0].batch_lines).toBe(3);
    expect(Number(settled.billed)).toBeGreaterThan(0);
    expect(Number(records[0].credit_used)).toBeCloseTo(Number(settled.billed), 12);
    expect(await balanceOf(restarted, user.ID)).toBeCloseTo(5 - Number(settled.billed), 5);
  }, 180_000);

  it('a pending row whose create never reached the provider is released, with an operation-log entry', async () => {
    const { admin, user, client, file } = await start({ SWITCHYARD_TEST_BATCH_PENDING_GRACE_MS: '1000' });
    // The connection drops before the provider answers: the gateway cannot know whether it has the batch.
    mock.behave(SECRET, { dropConnection: true, times: 1 });
    const refused = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' }).then(() => null, (e) => e);
    expect(refused?.status).toBe(502);
    expect(await atProvider()).toEqual([]);
    const [pending] = await rowsOf(user.ID);
    expect(pending?.id).toMatch(/^pending_/);
    await until(async () => (await rowsOf(user.ID))[0].settled_at !== null, 30_000);
    const [released] = await rowsOf(user.ID);
    expect(released.status).toBe('creating');
    expect(Number(released.billed)).toBe(0);
    const logs = await sql!<{ details: string }[]>`select details from operation_logs where action = 'batch_reservation_released' and target_id = ${user.ID}`;
    expect(logs).toHaveLength(1);
    expect(JSON.parse(logs[0].details)).toMatchObject({ batch: pending.id, reserved: Number(pending.reserved) });
    expect(await sql!`select 1 from usage_records where account_id = ${user.ID}`).toHaveLength(0);
    // The hold is given back: the balance is whole and a new batch fits.
    expect(await balanceOf(admin, user.ID)).toBeCloseTo(5, 6);
    const b = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    expect(b.metadata).toBeNull();
    expect(b.id).toMatch(/^batch_/);
  }, 180_000);

  it('a refused create leaves no row; metadata leaving no room for the gateway\'s key is refused 400', async () => {
    const { user, client, file } = await start({});
    mock.behave(SECRET, { status: 500, times: 1 });
    const failed = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' }).then(() => null, (e) => e);
    expect(failed?.status).toBe(500);
    expect(await rowsOf(user.ID)).toEqual([]);
    const full = Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`k${i}`, 'v']));
    const tooMany = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h', metadata: full }).then(() => null, (e) => e);
    expect(tooMany?.status).toBe(400);
    expect(tooMany?.message).toContain('switchyard_batch');
    expect(await rowsOf(user.ID)).toEqual([]);
    expect(await atProvider()).toEqual([]);
  }, 120_000);
});
