import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../testing/gateway';
import { createAccount, rootAccount, usageOf, type TestAccount } from '../../testing/accounts';
import { outputLine, settleTestBatch } from '../../testing/settled-batch';
import type { BatchBill } from '../../gateway/batches/settlement';

/**
 * A provider batch's one usage record, as the settlement writes it, in the request log (its
 * batch ID and billed lines; a call carries neither) and in the live dashboards (its own model
 * entry and the period's batch figures, apart from calls).
 */
let gw: TestGateway;
let owner: TestAccount;
let user: TestAccount;
let bill: BatchBill;
const BATCH_ID = `batch_log_${process.pid}`;

beforeAll(async () => {
  gw = await startTestGateway({ tenancy: 'multi' });
  owner = await createAccount(gw, rootAccount(gw), { Role: 'owner' });
  user = await createAccount(gw, owner, { CreditGranted: 50 });
  gw.gateway.usage.record(usageOf(user, { model: 'gpt-4o-mini', creditUsed: 0.125, requestId: 'call-1', at: new Date(Date.now() - 60_000) }));
  await gw.gateway.usage.flush();
  bill = await settleTestBatch(gw, user, {
    id: BATCH_ID, model: 'gpt-4o-mini',
    output: [1, 2, 3].map((n) => outputLine(n, { prompt_tokens: 100 * n, completion_tokens: 10 * n })),
  });
});
afterAll(async () => { await gw?.close(); });

async function get(key: string, path: string) {
  const r = await gw.as(key).get(path);
  expect(r.status, `${path}: ${r.text}`).toBe(200);
  return r.body;
}

describe('a provider batch in the request log', () => {
  it('is one record naming its batch and billed lines; a call names neither', async () => {
    const page = await get(user.key, '/dashboard/requests');
    expect(page.data).toHaveLength(2);
    const [batch, call] = page.data;
    expect(batch).toMatchObject({
      request_id: BATCH_ID, batch_id: BATCH_ID, batch_lines: 3, model: 'gpt-4o-mini', endpoint: '/v1/chat/completions',
      prompt: 600, completion: 60, account_id: user.id, status: 'ok',
    });
    expect(batch.credit_used).toBeCloseTo(bill.cost, 10);
    expect(call).toMatchObject({ request_id: 'call-1', credit_used: 0.125 });
    expect(call).not.toHaveProperty('batch_id');
    expect(call).not.toHaveProperty('batch_lines');
  });

  it('is found by its batch ID and, for the Owner, in the tree\'s log', async () => {
    expect((await get(user.key, `/dashboard/requests?request_id=${BATCH_ID}`)).data.map((r: { batch_id?: string }) => r.batch_id)).toEqual([BATCH_ID]);
    const tree = await get(owner.key, '/dashboard/requests?scope=tree');
    expect(tree.data.filter((r: { batch_id?: string }) => r.batch_id === BATCH_ID)).toHaveLength(1);
  });
});

describe('a provider batch in the live dashboards', () => {
  it('has a model entry of its own and the period\'s batch figures, apart from calls', async () => {
    const cost = Number(bill.cost.toFixed(10));
    for (const live of [await get(user.key, '/dashboard/live'), await get(owner.key, `/x-info?user=${user.id}`)]) {
      const today = live.daily_usage;
      expect(today.ModelUsage['gpt-4o-mini (batch)']).toEqual({ Requests: 3, Prompt: 600, Completion: 60, Reasoning: 0, Cached: 0, CreditUsed: cost });
      expect(today.ModelUsage['gpt-4o-mini']).toMatchObject({ Requests: 1, CreditUsed: 0.125 });
      expect(today.Batch).toEqual({ Requests: 3, Prompt: 600, Completion: 60, Reasoning: 0, Cached: 0, CreditUsed: cost });
      expect(today.Requests).toBe(4);
      expect(today.CreditUsed).toBeCloseTo(0.125 + bill.cost, 10);
    }
  });

  it('carries no batch figures for an account whose usage is all calls', async () => {
    const other = await createAccount(gw, owner, { CreditGranted: 5 });
    gw.gateway.usage.record(usageOf(other, { creditUsed: 0.01 }));
    await gw.gateway.usage.flush();
    const live = await get(other.key, '/dashboard/live');
    expect(live.daily_usage.Requests).toBe(1);
    expect(live.daily_usage).not.toHaveProperty('Batch');
    expect(live.monthly_usage).not.toHaveProperty('Batch');
  });
});
