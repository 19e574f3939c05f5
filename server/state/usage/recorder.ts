import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { Db } from '../../adapters/storage/database';
import type { Logger } from '../../core/log';
import { errorFields } from '../../core/log';
import type { UsageEvent, UsageSink } from '../../domain/usage/types';
import { jsonRecords, type RecordWriter } from './record-writers';
import { readEventsAt, readLines, type JournalPosition, type OrphanRun, type UsageJournal } from './journal';
import { writtenIn } from './orphans';
import { chargesOf, sanitize } from './batch-rows';
import { writeBatch } from './batch-write';
import { PendingCredit } from './pending-credit';

export interface RecorderOptions {
  /** How often buffered events are written. */
  intervalMs?: number;
  /**
   * A buffer this long is written at once instead of waiting for the timer. By default a whole
   * transaction's worth: a batch costs the embedded database ~2.6 ms of CPU whatever its size,
   * so under load, batches of 1,000 cost the proxy 17 % of its throughput against the timer's.
   */
  batchSize?: number;
  /** Most events written in one transaction; a larger buffer is written in several. */
  maxPerTransaction?: number;
  /** How raw records reach the database (see record-writers.ts); the portable JSON path by default. */
  writeRecords?: RecordWriter;
  /**
   * Told, after each commit, what was charged per account in it: shared balances that count
   * charges not yet in the database (REDIS_URL) stop counting them there.
   */
  onWritten?: (charges: ReadonlyMap<number, number>) => void;
  /**
   * Where every event goes as it is recorded, before the database has it (journal.ts). Without
   * one (a throwaway database, memory://) events live in memory until written.
   */
  journal?: UsageJournal;
  /**
   * Most events held in memory while they wait for the database; past it (a database outage)
   * new events are kept only in the journal and read back from it once the database returns.
   */
  maxBuffered?: number;
}

/** Events written together in one transaction, under an ID that makes a retry recognisable. */
interface Batch {
  id: string;
  events: UsageEvent[];
  /** Journal sequence numbers of the first and last event (0 without a journal). */
  from: number;
  to: number;
}

interface Entry { seq: number; event: UsageEvent }

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Batch IDs are only needed while a retry can still come: far longer than any shutdown grace. */
const BATCH_ID_RETENTION = '2 days';
const PRUNE_EVERY_MS = 3_600_000;

/**
 * The proxy's usage sink. `record` appends the event to the journal (when there is one: synced
 * to disk every JOURNAL_SYNC_MS) and to memory; a timer (or a full buffer) writes the events in
 * batches, one transaction each (batch-write.ts); pending credit is kept per account
 * (pending-credit.ts) until its batch commits. A failed batch is kept whole, under its ID, and retried
 * first on the next tick; when a commit went through but its answer was lost, the retry finds
 * the ID already written and writes nothing twice. While the database is away, memory holds at
 * most `maxBuffered` events: the rest stay in the journal and are read back from it, in order.
 */
export class UsageRecorder implements UsageSink {
  private buffer: Entry[] = [];
  /** Batches whose transaction failed, oldest first: retried as they were, before new events. */
  private retries: Batch[] = [];
  /** The batch whose transaction is under way. */
  private inFlight: Batch | undefined;
  private batchesWritten = 0;
  /** Prefix of this recorder's batch and request IDs; a counter makes each unique. */
  private readonly instance = randomUUID();
  private sequence = 0;
  /** Journal sequence number of the last event recorded. */
  private seq = 0;
  /**
   * Set while events are kept only in the journal (memory was full): where in the current
   * segment the first of them starts, and how many such events wait there.
   */
  private spill: (JournalPosition & { waiting: number; nextSeq: number }) | undefined;
  private lastPrune = 0;
  private readonly pending = new PendingCredit();
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
  private readonly maxBuffered: number;
  private readonly writeRecords: RecordWriter;
  private readonly onWritten: RecorderOptions['onWritten'];
  private readonly journal: UsageJournal | undefined;
  /** Batch transactions committed, failed, and the time they took (for /metrics). */
  private readonly batchStats = { batches: 0, seconds: 0, failed: 0 };

  constructor(private readonly db: Db, private readonly log: Logger, opts: RecorderOptions = {}) {
    this.intervalMs = opts.intervalMs ?? 200;
    this.maxPerTransaction = opts.maxPerTransaction ?? 5000;
    this.batchSize = opts.batchSize ?? this.maxPerTransaction;
    this.maxBuffered = opts.maxBuffered ?? 50_000;
    this.writeRecords = opts.writeRecords ?? jsonRecords;
    this.onWritten = opts.onWritten;
    this.journal = opts.journal;
    this.timer = setInterval(() => this.tick(), this.intervalMs);
    this.timer.unref();
  }

  record(event: UsageEvent): void {
    if (!Number.isInteger(event.accountId) || !Number.isInteger(event.ownerId)) {
      // Unattributable, and it would fail every batch it joined.
      this.log.error('usage_event_rejected', { reason: 'accountId and ownerId must be integers', model: event.model });
      return;
    }
    const e = sanitize(event, () => `${this.instance}.${++this.sequence}`);
    if (this.closed) {
      // Nothing can write it any more; say so rather than drop it silently.
      this.log.error('usage_after_close', { account: e.accountId, model: e.model, credit_used: e.creditUsed });
      return;
    }
    const seq = ++this.seq;
    if (this.journal) {
      if (!this.spill && this.buffer.length >= this.maxBuffered) {
        this.spill = { ...this.journal.position(), waiting: 0, nextSeq: seq };
        this.log.warn('usage_buffer_spilled', { buffered: this.buffer.length, journal: 'events wait in the journal until the database returns' });
      }
      this.journal.appendEvent(seq, e);
    }
    if (this.spill) this.spill.waiting++;
    else this.buffer.push({ seq, event: e });
    this.pending.add(e);
    if (this.buffer.length >= this.batchSize && !this.flushing) this.tick();
  }

  /** Batches this recorder has written: moves whenever usage reaches the database (caches of bills key on it). */
  get writtenBatches(): number {
    return this.batchesWritten;
  }

  pendingCredit(accountId: number): number {
    return this.pending.of(accountId);
  }

  /** See PendingCredit: a failed batch (its commit may have happened) leaves it undefined until retried. */
  writeMark(): number | undefined {
    return this.pending.mark(this.retries.length > 0);
  }

  afterWrite(): Promise<void> {
    return this.pending.afterWrite();
  }

  private begin(batch: Batch): void {
    this.inFlight = batch;
    this.pending.writeBegan();
  }

  private end(): void {
    this.inFlight = undefined;
    this.pending.writeEnded();
  }

  /** Events recorded but not yet written (in memory or waiting in the journal). */
  get buffered(): number {
    let n = this.buffer.length + (this.spill?.waiting ?? 0) + (this.inFlight?.events.length ?? 0);
    for (const b of this.retries) n += b.events.length;
    return n;
  }

  /** Batch transactions committed (`batches`, taking `seconds` in all) and failed, since start. */
  get batchTimes(): Readonly<{ batches: number; seconds: number; failed: number }> {
    return this.batchStats;
  }

  /** Events held in memory: bounded by `maxBuffered` (plus one failed batch) whatever the outage. */
  get inMemory(): number {
    let n = this.buffer.length + (this.inFlight?.events.length ?? 0);
    for (const b of this.retries) n += b.events.length;
    return n;
  }

  /**
   * At start, before serving: the journals of runs whose process is gone (this instance's
   * earlier life after a crash, or one that shut down during an outage) are written to the
   * database in order, each event once, and removed. Events already in the database are known
   * from the journal's own written marks and from usage_batches (a batch ID names its range).
   */
  async replayOrphans(): Promise<number> {
    if (!this.journal) return 0;
    let total = 0;
    for (const orphan of await this.journal.claimOrphans()) total += await this.replay(orphan);
    return total;
  }

  private async replay(orphan: OrphanRun): Promise<number> {
    const isDone = await writtenIn(this.db, orphan);
    let written = 0;
    let batch: Entry[] = [];
    const writeOrphanBatch = async () => {
      if (!batch.length) return;
      const b: Batch = { id: `${orphan.run}/${batch[0].seq}-${batch[batch.length - 1].seq}`, from: batch[0].seq, to: batch[batch.length - 1].seq, events: batch.map((x) => x.event) };
      for (const e of b.events) this.pending.add(e);
      this.begin(b);
      try {
        await this.db.transaction((tx) => writeBatch(tx, b, this.writeRecords, this.log));
      } finally {
        this.end();
      }
      this.settle(b.events);
      written += b.events.length;
      batch = [];
    };
    let last = 0;
    for await (const line of readLines(orphan.segments)) {
      if (line?.kind !== 'event' || line.seq <= last) continue;
      last = line.seq;
      if (isDone(line.seq)) {
        // A gap: the batch being gathered ends here, so its ID names one contiguous range.
        await writeOrphanBatch();
        continue;
      }
      batch.push(line);
      if (batch.length >= this.maxPerTransaction) await writeOrphanBatch();
    }
    await writeOrphanBatch();
    await orphan.remove();
    this.log.info('usage_journal_replayed', { run: orphan.run, events: written });
    return written;
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
   * one attempt). What is still unwritten then stays in the journal, on disk, for the next
   * start to replay; without a journal it is lost, and logged.
   */
  async close(deadline = Date.now()): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    let attempts = 1;
    for (; ; attempts++) {
      try {
        await this.flush();
        break;
      } catch (err) {
        const left = deadline - Date.now();
        if (left <= 0) {
          if (!this.journal) this.log.error('usage_lost_on_shutdown', { events: this.buffered, attempts, ...errorFields(err) });
          break;
        }
        // The last attempt is made at the deadline rather than skipped for a longer backoff.
        await sleep(Math.min(Math.max(this.retryAt - Date.now(), 0), left));
      }
    }
    this.closed = true;
    if (this.journal) {
      const left = this.buffered;
      try {
        await this.journal.close(left === 0);
        if (left > 0) this.log.warn('usage_left_in_journal', { events: left, attempts, journal: this.journal.dir });
      } catch (err) {
        this.log.error('usage_lost_on_shutdown', { events: left, attempts, ...errorFields(err) });
      }
    }
  }

  private tick(): void {
    if ((this.buffer.length === 0 && this.retries.length === 0 && !this.spill) || this.flushing || Date.now() < this.retryAt) return;
    // The failure was logged by drain; the events stay buffered for the next tick.
    this.flush().catch(() => undefined);
  }

  /** The next batch to write: a failed one first, then memory (older), then what waits in the journal. */
  private async nextBatch(leftInMemory: number): Promise<Batch | undefined> {
    const retry = this.retries.shift();
    if (retry) return retry;
    let entries: Entry[];
    if (leftInMemory > 0 && this.buffer.length > 0) {
      entries = this.buffer.splice(0, Math.min(leftInMemory, this.maxPerTransaction));
    } else if (this.spill && this.journal) {
      // Everything recorded so far on disk, then read back from where the spill began.
      await this.journal.sync();
      const spill = this.spill;
      for (;;) {
        const read = await readEventsAt(this.journal.segmentPath(spill.segment), spill.offset, this.journal.writtenBytes, this.maxPerTransaction);
        if (!read.events.length) return undefined;
        spill.offset = read.next;
        // Sequence numbers, not only the offset, say what is new: a line written twice (a
        // write that failed halfway and was retried) is read once.
        entries = read.events.filter((x) => x.seq >= spill.nextSeq);
        if (!entries.length) continue;
        spill.nextSeq = entries[entries.length - 1].seq + 1;
        spill.waiting -= entries.length;
        break;
      }
    } else {
      return undefined;
    }
    if (!this.journal) return { id: `${this.instance}/${++this.sequence}`, from: 0, to: 0, events: entries.map((x) => x.event) };
    const from = entries[0].seq;
    const to = entries[entries.length - 1].seq;
    return { id: `${this.journal.run}/${from}-${to}`, from, to, events: entries.map((x) => x.event) };
  }

  private async drain(): Promise<number> {
    let written = 0;
    this.flushing = true;
    try {
      // Only what was buffered when the flush began: events that arrive meanwhile wait for
      // the next tick, or a fast database is written one tiny transaction after another.
      let left = this.buffer.length;
      let spilledLeft = this.spill?.waiting ?? 0;
      for (;;) {
        if (left <= 0 && spilledLeft <= 0 && this.retries.length === 0) break;
        const fromMemory = this.retries.length === 0 && left > 0 && this.buffer.length > 0;
        const batch = await this.nextBatch(left);
        if (!batch) break;
        if (fromMemory) left -= batch.events.length;
        else if (this.retries.length === 0 && batch.events.length) spilledLeft -= batch.events.length;
        this.begin(batch);
        const began = performance.now();
        try {
          await this.db.transaction((tx) => writeBatch(tx, batch, this.writeRecords, this.log));
          this.batchStats.batches++;
          this.batchStats.seconds += (performance.now() - began) / 1000;
        } catch (err) {
          this.batchStats.failed++;
          // Kept whole under its ID: if the commit did happen, the retry recognises it.
          this.retries.unshift(batch);
          this.end();
          this.failures++;
          this.retryAt = Date.now() + Math.min(this.intervalMs * 2 ** this.failures, 5000);
          // Messages come from the driver and name tables and columns, never account keys.
          this.log.error('usage_flush_failed', { events: batch.events.length, buffered: this.buffered, consecutive_failures: this.failures, error: (err as Error)?.message ?? String(err) });
          throw err;
        }
        // Pending credit leaves in the same turn the commit is known: a reader waiting in
        // afterWrite() runs later and finds both the database and pendingCredit up to date.
        this.end();
        this.settle(batch.events);
        if (this.failures > 0) this.log.info('usage_flush_recovered', { after_failures: this.failures });
        this.failures = 0;
        this.retryAt = 0;
        this.journal?.appendWritten(batch.from, batch.to);
        written += batch.events.length;
        // Caught up with the journal: new events are held in memory again.
        if (this.spill && this.spill.waiting <= 0 && this.buffer.length === 0 && this.retries.length === 0) {
          this.spill = undefined;
          this.log.info('usage_buffer_unspilled', {});
        }
      }
    } finally {
      this.flushing = false;
    }
    this.prune();
    await this.journal?.rotateIfDone(() => this.buffer.length === 0 && this.retries.length === 0 && !this.spill);
    return written;
  }

  /** Forgets batch IDs no retry can come for any more; an hourly statement, off the write path. */
  private prune(): void {
    const now = Date.now();
    if (now - this.lastPrune < PRUNE_EVERY_MS) return;
    this.lastPrune = now;
    this.db.execute(sql`DELETE FROM usage_batches WHERE written_at < now() - ${BATCH_ID_RETENTION}::interval`)
      .catch((err) => this.log.warn('usage_batches_prune_failed', errorFields(err)));
  }

  private settle(batch: UsageEvent[]): void {
    this.batchesWritten++;
    const charges = chargesOf(batch);
    this.pending.written(charges, this.buffered === 0);
    if (this.onWritten && charges.size) {
      try {
        this.onWritten(charges);
      } catch (err) {
        this.log.error('usage_on_written_failed', errorFields(err));
      }
    }
  }
}
