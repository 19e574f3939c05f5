import { sql } from 'drizzle-orm';
import type { Db, Tx } from '../../adapters/storage/database';
import { usageDaily } from '../../adapters/storage/schema';
import { deductCredit } from '../credits/ledger';
import type { Logger } from '../../core/log';
import { errorFields } from '../../core/log';
import type { UsageEvent, UsageSink } from '../../domain/usage/types';
import { jsonRecords, type RecordWriter } from './record-writers';

export interface RecorderOptions {
  /** How often buffered events are written. */
  intervalMs?: number;
  /** A buffer this long is written at once instead of waiting for the timer. */
  batchSize?: number;
  /** Most events written in one transaction; a larger buffer is written in several. */
  maxPerTransaction?: number;
  /** How raw records reach the database (see record-writers.ts); the portable JSON path by default. */
  writeRecords?: RecordWriter;
}

const INT_MAX = 2_147_483_647;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** usage_daily takes 11 parameters a row; PostgreSQL allows 65,535 per statement. */
const ROWS_PER_INSERT = 4000;
/** Raw records travel as one document (JSON or CSV): the bound is its size, not a parameter count. */
const RECORDS_PER_INSERT = 10_000;

/**
 * Root and Owners are not charged: they bring the provider keys their usage runs on.
 * Their ownerId is their own ID, so the event alone tells, without a database read.
 */
export const isCharged = (e: Pick<UsageEvent, 'accountId' | 'ownerId'>) => e.accountId !== e.ownerId;

export const utcDay = (at: Date) => at.toISOString().slice(0, 10);

interface DailyKey { accountId: number; day: string; model: string }
interface Daily extends DailyKey {
  ownerId: number; dna: string; requests: number; prompt: number; completion: number; reasoning: number; cached: number; creditUsed: number;
}

/**
 * The proxy's usage sink. `record` only appends to memory; a timer (or a full buffer) writes
 * the events in batches, one transaction each: the raw records, the daily aggregates bills
 * read, and the credit deductions. A failed batch goes back to the front of the buffer and
 * is retried on the next tick, so nothing is lost while the database is away.
 */
export class UsageRecorder implements UsageSink {
  private buffer: UsageEvent[] = [];
  private pending = new Map<number, number>();
  private chain: Promise<unknown> = Promise.resolve();
  private flushing = false;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private failures = 0;
  /** After a failure the timer backs off (up to 5 s) instead of hammering a database that is away. */
  private retryAt = 0;
  private readonly intervalMs: number;
  private readonly batchSize: number;
  private readonly maxPerTransaction: number;
  private readonly writeRecords: RecordWriter;

  constructor(private readonly db: Db, private readonly log: Logger, opts: RecorderOptions = {}) {
    this.intervalMs = opts.intervalMs ?? 200;
    this.batchSize = opts.batchSize ?? 1000;
    this.maxPerTransaction = opts.maxPerTransaction ?? 5000;
    this.writeRecords = opts.writeRecords ?? jsonRecords;
    this.timer = setInterval(() => this.tick(), this.intervalMs);
    this.timer.unref();
  }

  record(event: UsageEvent): void {
    if (!Number.isInteger(event.accountId) || !Number.isInteger(event.ownerId)) {
      // Unattributable, and it would fail every batch it joined.
      this.log.error('usage_event_rejected', { reason: 'accountId and ownerId must be integers', model: event.model });
      return;
    }
    const e = sanitize(event);
    if (this.closed) {
      // Nothing can write it any more; say so rather than drop it silently.
      this.log.error('usage_after_close', { account: e.accountId, model: e.model, credit_used: e.creditUsed });
      return;
    }
    this.buffer.push(e);
    if (isCharged(e) && e.creditUsed > 0) this.pending.set(e.accountId, (this.pending.get(e.accountId) ?? 0) + e.creditUsed);
    if (this.buffer.length >= this.batchSize && !this.flushing) this.tick();
  }

  pendingCredit(accountId: number): number {
    return this.pending.get(accountId) ?? 0;
  }

  /** Events recorded but not yet written. */
  get buffered(): number {
    return this.buffer.length;
  }

  /** Writes everything buffered so far; rejects (keeping the events) when the database fails. */
  flush(): Promise<number> {
    const run = this.chain.then(() => this.drain());
    this.chain = run.catch(() => undefined);
    return run;
  }

  /**
   * Stops the timer and writes what is left; called before the database closes. A database
   * that is away is retried (with the usual backoff) until `deadline` (epoch ms; by default
   * one attempt): buffered usage is money, so shutdown spends its grace on writing it, and
   * only then logs what could not be written.
   */
  async close(deadline = Date.now()): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    for (let attempts = 1; ; attempts++) {
      try {
        await this.flush();
        break;
      } catch (err) {
        const left = deadline - Date.now();
        if (left <= 0) {
          this.log.error('usage_lost_on_shutdown', { events: this.buffer.length, attempts, ...errorFields(err) });
          break;
        }
        // The last attempt is made at the deadline rather than skipped for a longer backoff.
        await sleep(Math.min(Math.max(this.retryAt - Date.now(), 0), left));
      }
    }
    this.closed = true;
  }

  private tick(): void {
    if (this.buffer.length === 0 || this.flushing || Date.now() < this.retryAt) return;
    // The failure was logged by drain; the events stay buffered for the next tick.
    this.flush().catch(() => undefined);
  }

  private async drain(): Promise<number> {
    let written = 0;
    this.flushing = true;
    try {
      // Only what was buffered when the flush began: events that arrive meanwhile wait for
      // the next tick, or a fast database is written one tiny transaction after another.
      let left = this.buffer.length;
      while (left > 0) {
        const batch = this.buffer.splice(0, Math.min(left, this.maxPerTransaction));
        left -= batch.length;
        try {
          await this.db.transaction((tx) => this.write(tx, batch));
        } catch (err) {
          this.buffer.unshift(...batch);
          this.failures++;
          this.retryAt = Date.now() + Math.min(this.intervalMs * 2 ** this.failures, 5000);
          // Messages come from the driver and name tables and columns, never account keys.
          this.log.error('usage_flush_failed', { events: batch.length, buffered: this.buffer.length, consecutive_failures: this.failures, error: (err as Error)?.message ?? String(err) });
          throw err;
        }
        if (this.failures > 0) this.log.info('usage_flush_recovered', { after_failures: this.failures });
        this.failures = 0;
        this.retryAt = 0;
        this.settle(batch);
        written += batch.length;
      }
    } finally {
      this.flushing = false;
    }
    return written;
  }

  private async write(tx: Tx, batch: UsageEvent[]): Promise<void> {
    for (let i = 0; i < batch.length; i += RECORDS_PER_INSERT) await this.writeRecords(tx, batch.slice(i, i + RECORDS_PER_INSERT));
    const daily = aggregate(batch);
    for (let i = 0; i < daily.length; i += ROWS_PER_INSERT) {
      await tx.insert(usageDaily).values(daily.slice(i, i + ROWS_PER_INSERT)).onConflictDoUpdate({
        target: [usageDaily.accountId, usageDaily.day, usageDaily.model],
        set: {
          dna: sql`excluded.dna`,
          requests: sql`${usageDaily.requests} + excluded.requests`,
          prompt: sql`${usageDaily.prompt} + excluded.prompt`,
          completion: sql`${usageDaily.completion} + excluded.completion`,
          reasoning: sql`${usageDaily.reasoning} + excluded.reasoning`,
          cached: sql`${usageDaily.cached} + excluded.cached`,
          creditUsed: sql`${usageDaily.creditUsed} + excluded.credit_used`,
        },
      });
    }
    // Ascending account order, so two instances flushing at once lock cards in the same order.
    for (const [accountId, amount] of [...chargesOf(batch)].sort((a, b) => a[0] - b[0])) {
      await deductCredit(tx, accountId, amount);
    }
  }

  private settle(batch: UsageEvent[]): void {
    for (const [accountId, amount] of chargesOf(batch)) {
      const left = (this.pending.get(accountId) ?? 0) - amount;
      if (left > 1e-12) this.pending.set(accountId, left);
      else this.pending.delete(accountId);
    }
  }
}

function chargesOf(batch: UsageEvent[]): Map<number, number> {
  const out = new Map<number, number>();
  for (const e of batch) if (isCharged(e) && e.creditUsed > 0) out.set(e.accountId, (out.get(e.accountId) ?? 0) + e.creditUsed);
  return out;
}

/** One row per (account, UTC day, model), sorted by key so concurrent upserts lock in one order. */
export function aggregate(batch: UsageEvent[]): Daily[] {
  const byKey = new Map<string, Daily>();
  for (const e of batch) {
    const day = utcDay(e.at);
    const k = `${e.accountId}|${day}|${e.model}`;
    let d = byKey.get(k);
    if (!d) byKey.set(k, (d = { accountId: e.accountId, day, model: e.model, ownerId: e.ownerId, dna: e.dna, requests: 0, prompt: 0, completion: 0, reasoning: 0, cached: 0, creditUsed: 0 }));
    d.requests++;
    d.prompt += e.prompt;
    d.completion += e.completion;
    d.reasoning += e.reasoning;
    d.cached += e.cached;
    d.creditUsed += e.creditUsed;
    d.dna = e.dna;
  }
  return [...byKey.values()].sort((a, b) => a.accountId - b.accountId || (a.day < b.day ? -1 : a.day > b.day ? 1 : 0) || (a.model < b.model ? -1 : a.model > b.model ? 1 : 0));
}

/** PostgreSQL text cannot hold NUL: one such model name would fail every batch it joined. */
const text = (s: string | undefined, max: number) => (s ?? '').replace(/\0/g, '').slice(0, max);

const count = (n: unknown) => (typeof n === 'number' && Number.isFinite(n) && n > 0 ? Math.min(Math.floor(n), INT_MAX) : 0);

/**
 * One malformed event must not block every batch after it (a token count past int4, a NaN
 * cost), so values are brought into the columns' ranges when recorded.
 */
function sanitize(e: UsageEvent): UsageEvent {
  return {
    accountId: e.accountId,
    ownerId: e.ownerId,
    dna: e.dna ?? '',
    model: text(e.model, 200) || 'unknown',
    level: Number.isInteger(e.level) && Math.abs(e.level!) <= INT_MAX ? e.level : null,
    keyId: Number.isInteger(e.keyId) && Math.abs(e.keyId!) <= INT_MAX ? e.keyId : null,
    endpoint: text(e.endpoint, 200),
    prompt: count(e.prompt),
    completion: count(e.completion),
    reasoning: count(e.reasoning),
    cached: count(e.cached),
    creditUsed: typeof e.creditUsed === 'number' && Number.isFinite(e.creditUsed) && e.creditUsed > 0 ? e.creditUsed : 0,
    status: e.status === 'abnormal' ? 'abnormal' : 'ok',
    at: e.at instanceof Date && !Number.isNaN(e.at.getTime()) ? e.at : new Date(),
  };
}
