/**
 * The gateway's own watch over open batches: every BATCH_POLL_MS each instance asks the
 * providers about the batches not yet settled (gateway_batches' open index), so a batch's end
 * is found and billed without any client polling. Several instances polling the same batch bill
 * it once (settlement.ts); a batch whose provider never ends it is given back its reservation
 * after its window and a margin (`expires_at`), with an operation-log entry. A row left
 * `creating` by an instance that died mid-create is adopted or released here (pending.ts).
 */
import { errorFields } from '../../core/log';
import { enabledKey } from '../stages/dispatch';
import { openBatches, type BatchRow } from './records';
import type { BatchApi } from './routes';
import { batchTarget, callWhole } from './upstream';
import { jsonOf, onSeen, type BatchDeps } from './service';
import { readBatch } from './provider-batch';
import { releaseUnfinished } from './settlement';
import { isPending, recoverPending } from './pending';

/** Open batches asked about per round (oldest first); the rest wait for the next round. */
const PER_ROUND = 1000;
/** Batches asked about at once. */
const CONCURRENCY = 8;

export class BatchPoller {
  private timer: NodeJS.Timeout | null = null;
  private round: Promise<void> | null = null;
  private stopped = false;

  constructor(private readonly d: BatchDeps, private readonly everyMs: number) {}

  start(): void {
    if (this.stopped || this.timer) return;
    this.timer = setTimeout(() => this.tick(), this.everyMs);
    this.timer.unref();
  }

  private tick(): void {
    this.timer = null;
    this.round = this.poll().catch((err) => this.d.log.warn('batch_poll_failed', errorFields(err))).finally(() => {
      this.round = null;
      this.start();
    });
  }

  /** One round over the open batches (tests call it directly). */
  async poll(now = Date.now()): Promise<void> {
    const rows = await openBatches(this.d.db, PER_ROUND);
    let next = 0;
    const worker = async () => {
      while (!this.stopped && next < rows.length) {
        const row = rows[next++];
        await this.pollOne(row, now).catch((err) => this.d.log.warn('batch_poll_failed', { batch: row.id, ...errorFields(err) }));
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, rows.length) }, worker));
  }

  private async pollOne(row: BatchRow, now: number): Promise<void> {
    const overdue = row.expiresAt.getTime() <= now;
    const key = enabledKey(this.d.pool, row.ownerId, row.keyId);
    const t = key ? await batchTarget(this.d.kinds, key, row.api as BatchApi, {}) : null;
    // A row its creator left before it got the provider's ID: adopted or released (pending.ts).
    if (isPending(row)) return recoverPending(this.d, row, t, now);
    if (!t) {
      // The key is gone: nothing more can be learnt of the batch; its hold ends with its window.
      if (overdue) await releaseUnfinished(this.d, row, row.status);
      return;
    }
    const path = row.api === 'anthropic' ? `/messages/batches/${row.id}` : `/batches/${row.id}`;
    const b = readBatch(row.api as BatchApi, jsonOf(await callWhole(this.d, t, { method: 'GET', path })));
    if (b && (await onSeen(this.d, row, t, b))) return;
    if (overdue) await releaseUnfinished(this.d, row, b?.status ?? row.status);
  }

  /** Stops polling; a round under way finishes. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.round;
  }
}
