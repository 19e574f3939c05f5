/**
 * A batch's bill, once: its output read line by line as it streams from the provider (never
 * held whole), each succeeded line's usage at the batch price (every token class at its own
 * price: the cost function settle uses, on the batch price), then ONE transaction that marks the
 * batch settled — `UPDATE … WHERE settled_at IS NULL`, the batch's idempotency key — and writes
 * its usage record (batch ID, lines) with the rollups and the credit deduction. Whoever settles a
 * batch second (another instance, a client's poll, a restart after a kill mid-way) updates no row
 * and writes nothing; a transaction that fails (a database outage) leaves the batch open for the
 * next poll. The reservation is given back where every instance sees it: the row no longer
 * counts in the bases (batches/held.ts), and the account's credit is read again everywhere.
 */
import { and, eq, isNull } from 'drizzle-orm';
import type { Db } from '../../adapters/storage/database';
import { accounts, gatewayBatches } from '../../adapters/storage/schema';
import type { Logger } from '../../core/log';
import { costOf, type TokenUsage } from '../../domain/pricing/cost';
import { batchPrice } from '../../domain/pricing/batch-price';
import { policyPrice } from '../../domain/pricing/unpriced-policy';
import type { UsageEvent } from '../../domain/usage/types';
import type { OwnerConfigStore } from '../../state/owner-config/store';
import { writeBatch } from '../../state/usage/batch-write';
import type { RecordWriter } from '../../state/usage/record-writers';
import type { Changes } from '../../state/changes/state-changes';
import { recordOperation } from '../../state/oplog/oplog';
import { toCaller } from '../../state/accounts/caller';
import { normalizeUsage } from '../dispatch/response-usage';
import type { BatchRow } from './records';
import type { BatchApi } from './routes';
import { linesOf } from './upstream';

/** A batch's end as the provider reports it. */
export interface BatchEnd {
  /** The provider's final status (`completed`, `cancelled`, `expired`, `failed`; Anthropic's `ended`). */
  status: string;
  /** Whether lines that succeeded are billed (a failed batch ran nothing). */
  billable: boolean;
  completed: number;
  failed: number;
  /** The succeeded lines as they stream (OpenAI's output file, Anthropic's results); null: none to read. */
  output: (() => Promise<AsyncIterable<Buffer>>) | null;
}

/** What a batch's lines used and cost. */
export interface BatchBill {
  lines: number;
  prompt: number;
  completion: number;
  reasoning: number;
  cached: number;
  cost: number;
}

/** A succeeded line's usage: OpenAI's `response.body.usage` on a 2xx, Anthropic's `result.message.usage` on `succeeded`. */
export function lineUsage(api: BatchApi, line: string): TokenUsage | null {
  let v: any;
  try {
    v = JSON.parse(line);
  } catch {
    return null;
  }
  if (api === 'openai') {
    const r = v?.response;
    if (!r || typeof r.status_code !== 'number' || r.status_code >= 300) return null;
    return normalizeUsage(r.body?.usage, 'openai');
  }
  if (v?.result?.type !== 'succeeded') return null;
  return normalizeUsage(v.result.message?.usage, 'anthropic');
}

/** Sums the output's succeeded lines, each at `price`'s cost (long-context tiers apply per line, as per call). */
export async function billOf(api: BatchApi, body: AsyncIterable<Buffer>, cost: (u: TokenUsage) => number): Promise<BatchBill> {
  const b: BatchBill = { lines: 0, prompt: 0, completion: 0, reasoning: 0, cached: 0, cost: 0 };
  for await (const line of linesOf(body)) {
    const u = lineUsage(api, line);
    if (!u) continue;
    b.lines++;
    b.prompt += u.prompt;
    b.completion += u.completion;
    b.reasoning += u.reasoning;
    b.cached += u.cached;
    b.cost += cost(u);
  }
  return b;
}

export interface SettlementDeps {
  db: Db;
  config: Pick<OwnerConfigStore, 'routing'>;
  writeRecords: RecordWriter;
  changes?: Pick<Changes, 'announce'>;
  log: Pick<Logger, 'warn' | 'info'>;
  /** Test hook: a pause between reading the output and committing the bill (a kill lands there). */
  pauseBeforeCommitMs?: number;
}

const NO_BILL: BatchBill = { lines: 0, prompt: 0, completion: 0, reasoning: 0, cached: 0, cost: 0 };

/** Bills `row` for its end; what this call billed, or null when the batch was settled already. */
export async function settleBatch(d: SettlementDeps, row: BatchRow, end: BatchEnd): Promise<BatchBill | null> {
  const [account] = await d.db.select().from(accounts).where(eq(accounts.id, row.accountId));
  let bill = NO_BILL;
  if (end.billable && end.output) {
    const owner = await d.config.routing(row.ownerId);
    const price = batchPrice(policyPrice(row.model, owner.pricing, owner.unpricedPolicy));
    const rates = account?.rates ?? 1;
    const factor = account?.factor ?? 1;
    bill = await billOf(row.api as BatchApi, await end.output(), (u) => costOf(u, price, rates, factor));
  }
  if (d.pauseBeforeCommitMs) {
    d.log.info('batch_settle_paused', { batch: row.id, ms: d.pauseBeforeCommitMs });
    await new Promise((r) => setTimeout(r, d.pauseBeforeCommitMs));
  }
  const now = new Date();
  const settled = await d.db.transaction(async (tx) => {
    const won = await tx.update(gatewayBatches)
      .set({ settledAt: now, billed: bill.cost, status: end.status, completedLines: end.completed, failedLines: end.failed })
      .where(and(eq(gatewayBatches.id, row.id), isNull(gatewayBatches.settledAt)))
      .returning({ id: gatewayBatches.id });
    if (won.length === 0) return false;
    if (bill.lines > 0 || bill.cost > 0) {
      const event: UsageEvent = {
        accountId: row.accountId, ownerId: row.ownerId, dna: row.dna, model: row.model, level: row.level, keyId: row.keyId, endpoint: row.endpoint,
        prompt: bill.prompt, completion: bill.completion, reasoning: bill.reasoning, cached: bill.cached, creditUsed: bill.cost,
        status: 'ok', at: now, requestId: row.id, batchId: row.id, batchLines: bill.lines,
      };
      // The usage batch's own ID is the provider batch's: written once, with the row above.
      await writeBatch(tx, { id: `batch:${row.id}`, events: [event] }, d.writeRecords, d.log);
    }
    if (account && account.id !== account.ownerId) await d.changes?.announce(tx, [{ k: 'credit', id: row.accountId }]);
    return true;
  });
  if (!settled) return null;
  d.log.info('batch_settled', { batch: row.id, account: row.accountId, status: end.status, lines: bill.lines, billed: bill.cost, reserved: row.reserved });
  return bill;
}

/**
 * A batch the provider never finished within its window (24 h and a margin): its reservation
 * is given back unbilled, and the Owner's operation log says so.
 */
export async function releaseUnfinished(d: SettlementDeps, row: BatchRow, status: string, reason = 'the provider did not finish the batch within its window'): Promise<boolean> {
  const [owner] = await d.db.select().from(accounts).where(eq(accounts.id, row.ownerId));
  const released = await d.db.transaction(async (tx) => {
    const won = await tx.update(gatewayBatches)
      .set({ settledAt: new Date(), billed: 0, status })
      .where(and(eq(gatewayBatches.id, row.id), isNull(gatewayBatches.settledAt)))
      .returning({ id: gatewayBatches.id });
    if (won.length === 0) return false;
    if (owner) {
      await recordOperation(tx, { caller: toCaller(owner), ip: '' }, {
        action: 'batch_reservation_released',
        targetId: row.accountId,
        details: { batch: row.id, api: row.api, model: row.model, reserved: row.reserved, status, reason, by: 'gateway' },
      });
    }
    if (row.accountId !== row.ownerId) await d.changes?.announce(tx, [{ k: 'credit', id: row.accountId }]);
    return true;
  });
  if (released) d.log.warn('batch_reservation_released', { batch: row.id, account: row.accountId, reserved: row.reserved, status });
  return released;
}
