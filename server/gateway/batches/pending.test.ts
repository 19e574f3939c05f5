/**
 * Anthropic's Message Batches carry no metadata: a row its creator left `creating` is matched
 * to the key's one batch created in the row's window with the row's request count (pending.ts).
 * The row and the provider's batch are made here as a create killed between the two would leave
 * them; the gateway's poller adopts the batch and bills it once, or releases a row no batch matches.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Anthropic from '@anthropic-ai/sdk';
import { sql } from 'drizzle-orm';
import { nextLevel, secret, startProxyFixture, type ProxyFixture } from '../test-fixture';
import { until } from '../../testing/until';

const MODEL = 'claude-test-1';
let f: ProxyFixture;
beforeAll(async () => {
  // Rows older than a second are looked for at the provider (the default waits out the upstream timeout).
  process.env.SWITCHYARD_TEST_BATCH_PENDING_GRACE_MS = '1000';
  f = await startProxyFixture({ userMinBalance: 0, batchPollMs: 50 });
  f.mock.batchClock({ stepMs: null });
  await f.config({ PRICING: JSON.stringify({ ChatPricing: { [MODEL]: { InputText: 3, OutputText: 15 } } }) });
}, 60_000);
afterAll(async () => {
  delete process.env.SWITCHYARD_TEST_BATCH_PENDING_GRACE_MS;
  await f?.close();
});

const request = (i: number) => ({ custom_id: `r${i}`, params: { model: MODEL, max_tokens: 64, messages: [{ role: 'user' as const, content: `Question ${i}` }] } });
const rows = (accountId: number) => f.gw.gateway.database.rows<Record<string, any>>(sql`select * from gateway_batches where account_id = ${accountId}`);

/** `accepted` makes what the provider accepted before the gateway died; then the row is written as the create left it (the poller may look at once). */
async function orphan<T>(label: string, lines: number, accepted: (provider: Anthropic) => Promise<T>) {
  const level = nextLevel();
  const key = secret(label);
  const keyId = await f.addKey(level, key, { config: { provider_type: 'anthropic' } });
  const user = await f.account({ level, credit: 10 });
  const pending = `pending_${label}-${Date.now()}`;
  const provider = new Anthropic({ apiKey: key, baseURL: f.mock.url, maxRetries: 0, defaultHeaders: { 'x-api-key': key } });
  const made = await accepted(provider);
  // The row as a create commits it before asking the provider, a few seconds ago.
  await f.gw.gateway.database.rows(sql`insert into gateway_batches (id, owner_id, account_id, dna, key_id, level, api, endpoint, model, status, lines, reserved, expires_at, created_at)
    values (${pending}, ${user.ownerId}, ${user.id}, ${user.dna}, ${keyId}, ${level}, 'anthropic', '/v1/messages', ${MODEL}, 'creating', ${lines}, 0.5, ${new Date(Date.now() + 25 * 3600_000).toISOString()}::timestamptz, ${new Date(Date.now() - 3000).toISOString()}::timestamptz)`);
  return { user, pending, made };
}

describe('a Message Batch whose row never took its ID', () => {
  it('is adopted by the key\'s one batch of the row\'s window and request count, then billed once', async () => {
    // A batch of another size on the same key is not the row's.
    const { user, pending, made } = await orphan('orphan-adopt', 3, async (provider) => [
      await provider.messages.batches.create({ requests: [request(1), request(2)] }),
      await provider.messages.batches.create({ requests: [request(1), request(2), request(3)] }),
    ]);
    const [other, batch] = made;
    await until(async () => (await rows(user.id)).some((r) => r.id === batch.id), 30_000);
    expect((await rows(user.id)).map((r) => r.id)).toEqual([batch.id]);
    expect(f.gw.logs.some((l) => l.includes('batch_pending_adopted') && l.includes(pending))).toBe(true);
    for (let i = 0; i < 4; i++) await f.mock.stepBatches();
    await until(async () => (await rows(user.id))[0].settled_at !== null, 30_000);
    const records = await f.gw.gateway.database.rows<Record<string, any>>(sql`select * from usage_records where batch_id = ${batch.id}`);
    expect(records).toHaveLength(1);
    expect(records[0].batch_lines).toBe(3);
    expect(await f.gw.gateway.database.rows(sql`select 1 from gateway_batches where id = ${other.id}`)).toHaveLength(0);
  }, 60_000);

  it('is released, with an operation-log entry, when no batch of the key matches', async () => {
    const { user, pending } = await orphan('orphan-release', 4, (provider) => provider.messages.batches.create({ requests: [request(1), request(2)] }));
    await until(async () => (await rows(user.id))[0].settled_at !== null, 30_000);
    const [row] = await rows(user.id);
    expect(row).toMatchObject({ id: pending, status: 'creating' });
    expect(Number(row.billed)).toBe(0);
    const logs = await f.gw.gateway.database.rows<Record<string, any>>(sql`select * from operation_logs where action = 'batch_reservation_released' and target_id = ${user.id}`);
    expect(logs).toHaveLength(1);
    expect(JSON.stringify(logs[0].details)).toContain(pending);
  }, 60_000);
});
