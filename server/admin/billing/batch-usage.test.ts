import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../testing/gateway';
import { createAccount, rootAccount, usageOf, type TestAccount } from '../../testing/accounts';
import { outputLine, settleTestBatch } from '../../testing/settled-batch';
import type { BatchBill } from '../../gateway/batches/settlement';

/**
 * A provider batch's usage, billed once by the gateway's settlement, shows in bills apart from
 * the same model's calls: its own line item and summary entry (`gpt-4o (batch)`, `batch: true`),
 * its lines counted as requests, for the account itself and in its parents' bills.
 */
let gw: TestGateway;
let owner: TestAccount;
let user: TestAccount;
let bill: BatchBill;
const BATCH_ID = `batch_bill_${process.pid}`;

beforeAll(async () => {
  gw = await startTestGateway({ tenancy: 'multi' });
  owner = await createAccount(gw, rootAccount(gw), { Role: 'owner' });
  user = await createAccount(gw, owner, { CreditGranted: 50 });
  gw.gateway.usage.record(usageOf(user, { model: 'gpt-4o', prompt: 100, completion: 50, creditUsed: 0.25 }));
  gw.gateway.usage.record(usageOf(user, { model: 'gpt-4o', prompt: 10, completion: 5, creditUsed: 0.5 }));
  await gw.gateway.usage.flush();
  // Two lines answered, one failed at the provider: two billed, at the batch price.
  bill = await settleTestBatch(gw, user, {
    id: BATCH_ID, model: 'gpt-4o',
    output: [outputLine(1, { prompt_tokens: 1000, completion_tokens: 200 }), outputLine(2, null), outputLine(3, { prompt_tokens: 500, completion_tokens: 100 })],
  });
});
afterAll(async () => { await gw?.close(); });

async function get(key: string, path: string) {
  const r = await gw.as(key).get(path);
  expect(r.status, `${path}: ${r.text}`).toBe(200);
  return r.body;
}

describe('a provider batch in bills', () => {
  it('was billed once, at half the standard price of its lines', () => {
    expect(bill).toMatchObject({ lines: 2, prompt: 1500, completion: 300 });
    // gpt-4o: 2.50 $/M in, 10 $/M out; half for a batch.
    expect(bill.cost).toBeCloseTo((1500 * 2.5 + 300 * 10) / 1e6 / 2, 12);
  });

  it('is a line item and a summary entry of its own in the account\'s bill, apart from the model\'s calls', async () => {
    const b = await get(user.key, '/dashboard/bill?days=2');
    const items = b.daily_costs.flatMap((d: { line_items: unknown[] }) => d.line_items);
    const batch = items.filter((i: { batch?: boolean }) => i.batch);
    expect(batch).toEqual([{ name: 'gpt-4o (batch)', model: 'gpt-4o', batch: true, cost: Number(bill.cost.toFixed(10)), usage: { requests: 2, prompt: 1500, completion: 300, reasoning: 0, cached: 0 } }]);
    const calls = items.filter((i: { batch?: boolean }) => !i.batch);
    expect(calls).toEqual([{ name: 'gpt-4o', cost: 0.75, usage: { requests: 2, prompt: 110, completion: 55, reasoning: 0, cached: 0 } }]);
    expect(b.usage_summary['gpt-4o (batch)']).toMatchObject({ batch: true, model: 'gpt-4o', model_stats: { Requests: 2, Prompt: 1500, Completion: 300 } });
    expect(b.usage_summary['gpt-4o']).not.toHaveProperty('batch');
    expect(b.usage_summary['gpt-4o'].model_stats).toMatchObject({ Requests: 2, CreditUsed: 0.75 });
    // Totals hold both: each batch line is a request.
    expect(b.total_requests).toBe(4);
    expect(b.total_credit_used).toBeCloseTo(0.75 + bill.cost, 10);
  });

  it('shows apart in the parent\'s bill of its subtree and per account', async () => {
    const b = await get(owner.key, '/x-bill?days=2');
    expect(b.usage_summary['gpt-4o (batch)']).toMatchObject({ batch: true, model: 'gpt-4o', model_stats: { Requests: 2, Prompt: 1500, Completion: 300 } });
    expect(b.usage_summary['gpt-4o'].model_stats.CreditUsed).toBeCloseTo(0.75, 10);
    expect(b.usage_users).toHaveLength(1);
    expect(b.usage_users[0]).toMatchObject({ id: user.id, total_requests: 4 });
    expect(b.usage_users[0].total_credit_used).toBeCloseTo(0.75 + bill.cost, 10);
    // The same through a named account (its own rollup rows) and through its subtree.
    for (const q of [`user=${user.id}`, `user=${encodeURIComponent(user.dna)}`]) {
      const one = await get(owner.key, `/x-bill?days=2&${q}`);
      expect(one.usage_summary['gpt-4o (batch)'], q).toMatchObject({ batch: true, model_stats: { Requests: 2 } });
    }
  });

  it('took the batch\'s cost from the account\'s credit once', async () => {
    const info = await get(user.key, '/dashboard/info');
    expect(info.balance).toBeCloseTo(50 - 0.75 - bill.cost, 8);
  });
});
