import { randomUUID } from 'node:crypto';
import { closeSync, createReadStream, fdatasync, mkdirSync, openSync, promises as fsp, write } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { Logger } from '../../core/log';
import { errorFields } from '../../core/log';
import { processRuns } from '../../core/processes';
import type { UsageEvent } from '../../domain/usage/types';
import type { UsageUnits } from '../../domain/usage/units';

/**
 * The usage journal: an append-only local file every usage event is written to as it is
 * recorded, before the database has it, so that a crash, a SIGTERM during a database outage or
 * an outage longer than memory can hold loses nothing (see docs/decisions.md, "Usage journal").
 *
 * Layout: `<DATA_DIR>/usage-journal/<database id>/`, one set of files per run of an instance:
 * `<run>.<n>.jnl` segments (one line per event, `[seq, …fields]`, and one per committed batch,
 * `{"w":[from,to]}`), and an owner marker `<run>.owner.<host>~<pid>~<owner run>` naming the
 * process responsible for the run. A run whose owner is dead is an orphan: the next instance to
 * start on the same database claims it (an atomic rename of the marker) and replays it.
 */

/** Pending lines are written and fdatasync'ed this often: a SIGKILL loses at most this much. */
export const JOURNAL_SYNC_MS = 50;
/** A segment whose every event is in the database is replaced by a fresh one past this size. */
const ROTATE_BYTES = 8 * 1024 * 1024;
/** Another host's run is dead when its owner marker has not been touched for this long. */
const FOREIGN_STALE_MS = 15_000;
const HEARTBEAT_MS = 3_000;

export interface JournalPosition { segment: number; offset: number }

type EventLine = [number, number, number, string, string, number | null, number | null, string, number, number, number, number, number, string, number, string | undefined, (number | null)?, (number | null)?, (UsageUnits | null)?, (string[] | null)?, (string | null)?, (number | null)?, (string | null)?];

export function encodeEvent(seq: number, e: UsageEvent): string {
  const line: EventLine = [seq, e.accountId, e.ownerId, e.dna, e.model, e.level, e.keyId, e.endpoint, e.prompt, e.completion, e.reasoning, e.cached, e.creditUsed, e.status, e.at.getTime(), e.requestId, e.durationMs ?? null, e.firstByteMs ?? null];
  // Only a unit-billed call's line carries its units: a chat call's line stays as it was.
  const kind = e.keyKind !== undefined;
  if (e.units || e.droppedTools || e.batchId !== undefined || kind) line.push(e.units ?? null);
  if (e.droppedTools || e.batchId !== undefined || kind) line.push(e.droppedTools ?? null);
  // A batch's record (gateway/batches) names its batch and lines; older lines end before.
  if (e.batchId !== undefined || kind) line.push(e.batchId ?? null, e.batchLines ?? null);
  // The serving key's kind (the latency rollup's) comes last: lines written before it end before.
  if (kind) line.push(e.keyKind!);
  return `${JSON.stringify(line)}\n`;
}

export function decodeEvent(l: EventLine): { seq: number; event: UsageEvent } {
  return {
    seq: l[0],
    event: {
      accountId: l[1], ownerId: l[2], dna: l[3], model: l[4], level: l[5], keyId: l[6], endpoint: l[7], prompt: l[8], completion: l[9],
      reasoning: l[10], cached: l[11], creditUsed: l[12], status: l[13] === 'abnormal' ? 'abnormal' : 'ok', at: new Date(l[14]), requestId: l[15] ?? undefined,
      // Lines written before the timings were kept end at the request ID.
      durationMs: l[16] ?? undefined, firstByteMs: l[17] ?? undefined, units: l[18] ?? undefined,
      droppedTools: l[19] ?? undefined, batchId: l[20] ?? undefined, batchLines: l[21] ?? undefined,
      ...(l[22] ? { keyKind: l[22] } : {}),
    },
  };
}

/** One parsed journal line: an event, a committed range, or nothing (a torn last line after a crash). */
export type JournalLine = { kind: 'event'; seq: number; event: UsageEvent } | { kind: 'written'; from: number; to: number } | null;

export function parseLine(text: string): JournalLine {
  if (!text) return null;
  try {
    const v = JSON.parse(text);
    if (Array.isArray(v)) return { kind: 'event', ...decodeEvent(v as EventLine) };
    if (v && Array.isArray(v.w)) return { kind: 'written', from: v.w[0], to: v.w[1] };
  } catch {
    // A line cut by a crash mid-write: the events before it are whole, and it was never answered for.
  }
  return null;
}

const identity = (run: string) => `${os.hostname().replace(/[~./]/g, '_')}~${process.pid}~${run}`;

/** An orphan run claimed by this process: its segments in order, to be replayed and then removed. */
export interface OrphanRun {
  run: string;
  segments: string[];
  /** Removes the run's files once every event is in the database. */
  remove(): Promise<void>;
}

export class UsageJournal {
  readonly run = randomUUID();
  private segment = 0;
  private fd: number;
  private pendingText = '';
  private pendingBytes = 0;
  /** Bytes of the current segment written to the file (pending ones not included). */
  private written = 0;
  /** Bytes taken from pending by a sync under way: neither pending nor written yet, but ahead of any new line. */
  private syncing = 0;
  private writing: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private failed = false;
  private marker: string;

  private constructor(readonly dir: string, private readonly log: Logger) {
    this.marker = path.join(dir, `${this.run}.owner.${identity(this.run)}`);
    // Another instance's clean stop removes the directory when it is empty: make it again if so.
    for (let attempt = 0; ; attempt++) {
      try {
        mkdirSync(dir, { recursive: true });
        closeSync(openSync(this.marker, 'w'));
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= 5) throw err;
      }
    }
    this.fd = openSync(this.segmentPath(0), 'a');
    this.timer = setInterval(() => { this.sync().catch(() => undefined); }, JOURNAL_SYNC_MS);
    this.timer.unref();
    this.heartbeat = setInterval(() => {
      const now = new Date();
      fsp.utimes(this.marker, now, now).catch(() => undefined);
    }, HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  /** Opens this run's journal under `<dataDir>/usage-journal/<databaseId>/`. */
  static async open(dataDir: string, databaseId: string, log: Logger): Promise<UsageJournal> {
    const dir = path.join(dataDir, 'usage-journal', databaseId);
    await fsp.mkdir(dir, { recursive: true });
    return new UsageJournal(dir, log);
  }

  segmentPath(n: number, run = this.run): string {
    return path.join(this.dir, `${run}.${n}.jnl`);
  }

  /** Where the next appended line will start. */
  position(): JournalPosition {
    return { segment: this.segment, offset: this.written + this.syncing + this.pendingBytes };
  }

  /** Bytes of the current segment on file (pending lines excluded). */
  get writtenBytes(): number {
    return this.written;
  }

  appendEvent(seq: number, e: UsageEvent): void {
    this.append(encodeEvent(seq, e));
  }

  /** Events `from`..`to` are in the database: a replay skips them without asking it. */
  appendWritten(from: number, to: number): void {
    this.append(`{"w":[${from},${to}]}\n`);
  }

  private append(line: string): void {
    this.pendingText += line;
    this.pendingBytes += Buffer.byteLength(line);
  }

  /** Writes and fdatasyncs the pending lines; resolves when everything appended before the call is on disk. */
  sync(): Promise<void> {
    const run = this.writing.then(async () => {
      if (!this.pendingText) return;
      const text = this.pendingText;
      const bytes = this.pendingBytes;
      this.pendingText = '';
      this.pendingBytes = 0;
      this.syncing = bytes;
      const fd = this.fd;
      try {
        const buf = Buffer.from(text);
        let off = 0;
        while (off < buf.length) {
          const { bytesWritten } = await writeAt(fd, buf, off);
          off += bytesWritten;
        }
        await datasync(fd);
        this.written += bytes;
        this.syncing = 0;
        if (this.failed) this.log.info('usage_journal_recovered', {});
        this.failed = false;
      } catch (err) {
        // Kept pending (in front of what came since) and tried again on the next tick.
        this.pendingText = text + this.pendingText;
        this.pendingBytes += bytes;
        this.syncing = 0;
        if (!this.failed) this.log.error('usage_journal_write_failed', errorFields(err));
        this.failed = true;
        throw err;
      }
    });
    this.writing = run.catch(() => undefined);
    return run;
  }

  /**
   * Starts a fresh segment when the current one is large and `allWritten` (every event in it is
   * in the database) still holds once the write under way has finished; the old file goes.
   */
  async rotateIfDone(allWritten: () => boolean): Promise<void> {
    if (this.written + this.pendingBytes < ROTATE_BYTES) return;
    await this.writing;
    if (!allWritten()) return;
    const old = { fd: this.fd, file: this.segmentPath(this.segment) };
    this.segment++;
    this.fd = openSync(this.segmentPath(this.segment), 'a');
    this.written = 0;
    closeSync(old.fd);
    await fsp.unlink(old.file).catch((err) => this.log.warn('usage_journal_unlink_failed', errorFields(err)));
  }

  /**
   * Stops the timers after a last sync. With `allWritten` the run's files are removed (nothing
   * in them is needed); otherwise they stay, and the next instance to start replays them.
   */
  async close(allWritten: boolean): Promise<void> {
    clearInterval(this.timer);
    clearInterval(this.heartbeat);
    try {
      await this.sync();
    } finally {
      closeSync(this.fd);
    }
    if (allWritten) {
      for (let n = 0; n <= this.segment; n++) await fsp.unlink(this.segmentPath(n)).catch(() => undefined);
      await fsp.unlink(this.marker).catch(() => undefined);
      // The database's directory goes with its last run (ENOTEMPTY while others remain).
      await fsp.rmdir(this.dir).catch(() => undefined);
    }
  }

  /** Claims every run in this journal directory whose owner is dead (this process's earlier lives included). */
  async claimOrphans(): Promise<OrphanRun[]> {
    const files = await fsp.readdir(this.dir);
    const out: OrphanRun[] = [];
    for (const f of files) {
      const m = /^([0-9a-f-]{36})\.owner\.(.+)~(\d+)~([0-9a-f-]{36})$/.exec(f);
      if (!m || m[1] === this.run) continue;
      const [, run, host, pidText] = m;
      const pid = Number(pidText);
      const full = path.join(this.dir, f);
      let dead: boolean;
      if (host === os.hostname().replace(/[~./]/g, '_')) dead = pid === process.pid || !processRuns(pid);
      else dead = Date.now() - (await fsp.stat(full).catch(() => null))?.mtimeMs! > FOREIGN_STALE_MS;
      if (!dead) continue;
      const claimed = path.join(this.dir, `${run}.owner.${identity(this.run)}`);
      try {
        await fsp.rename(full, claimed);
      } catch {
        continue; // another instance claimed it first
      }
      const segments = files
        .map((s) => new RegExp(`^${run}\\.(\\d+)\\.jnl$`).exec(s))
        .filter((x): x is RegExpExecArray => x !== null)
        .sort((a, b) => Number(a[1]) - Number(b[1]))
        .map((x) => path.join(this.dir, x[0]));
      out.push({
        run,
        segments,
        remove: async () => {
          for (const s of segments) await fsp.unlink(s).catch(() => undefined);
          await fsp.unlink(claimed).catch(() => undefined);
        },
      });
    }
    return out;
  }
}

/** Every line of an orphan run's segments, in order. */
export async function* readLines(segments: string[]): AsyncGenerator<JournalLine> {
  for (const file of segments) {
    const rl = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
    for await (const line of rl) yield parseLine(line);
  }
}

/**
 * Reads whole lines of the current segment from `offset` up to `end`, stopping after `maxEvents`
 * events: what a recorder whose buffer spilled writes next. `next` is where the following read starts.
 */
export async function readEventsAt(file: string, offset: number, end: number, maxEvents: number): Promise<{ events: { seq: number; event: UsageEvent }[]; next: number }> {
  const events: { seq: number; event: UsageEvent }[] = [];
  let pos = offset;
  const handle = await fsp.open(file, 'r');
  try {
    while (pos < end && events.length < maxEvents) {
      const len = Math.min(end - pos, 4 * 1024 * 1024);
      const buf = Buffer.allocUnsafe(len);
      const { bytesRead } = await handle.read(buf, 0, len, pos);
      if (bytesRead === 0) break;
      let start = 0;
      for (;;) {
        const nl = buf.indexOf(10, start);
        if (nl < 0 || nl >= bytesRead) break;
        const parsed = parseLine(buf.toString('utf8', start, nl));
        start = nl + 1;
        if (parsed?.kind === 'event') {
          events.push(parsed);
          if (events.length >= maxEvents) break;
        }
      }
      if (start === 0) break; // no whole line within reach: wait for the writer
      pos += start;
    }
  } finally {
    await handle.close();
  }
  return { events, next: pos };
}

function writeAt(fd: number, buf: Buffer, off: number): Promise<{ bytesWritten: number }> {
  return new Promise((resolve, reject) => write(fd, buf, off, buf.length - off, null, (err, bytesWritten) => (err ? reject(err) : resolve({ bytesWritten }))));
}

function datasync(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fdatasync(fd, (err) => (err ? reject(err) : resolve())));
}
