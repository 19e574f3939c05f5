import { randomUUID } from 'node:crypto';
import type { RedisLink } from '../../adapters/redis/link';
import { RedisHealthMarks } from '../../adapters/redis/health-marks';
import { errorFields, type Logger } from '../../core/log';
import type { HealthBoard, HealthMark, SwitchOverRule } from './board';

export interface SharedBoardOptions {
  link: RedisLink;
  log: Logger;
  /** The Owners whose marks to read at start and after an outage (the key pool's). */
  owners: () => Iterable<number>;
  /** How often the shared marks are read again while Redis is up, for messages pub/sub lost (ms). */
  resyncMs?: number;
  /** How long start() waits for Redis before serving per instance (ms). */
  startWaitMs?: number;
}

/**
 * Key health and switch-over shared through Redis (REDIS_URL). Announcements are written and
 * published in the background; the proxy never waits for Redis. While Redis is away every
 * instance goes on alone (one warning per outage); when it is back, this instance reads the
 * shared marks again and writes back its own that still hold, so the others learn what
 * happened here meanwhile.
 */
export class SharedHealthBoard implements HealthBoard {
  private readonly marks: RedisHealthMarks;
  private readonly listeners = new Set<(mark: HealthMark) => void>();
  /**
   * This instance's marks that still hold (and clears not yet written), by field: written
   * again after an outage.
   */
  private readonly mine = new Map<string, { mark: HealthMark; until: number | null }>();
  private degraded = false;
  private stopStatus: (() => void) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private syncing: Promise<void> | undefined;

  constructor(private readonly o: SharedBoardOptions) {
    this.marks = new RedisHealthMarks(o.link, randomUUID());
  }

  get shared(): boolean {
    return this.o.link.up;
  }

  /**
   * Subscribes and reads the current marks, waiting at most startWaitMs for Redis: the first
   * read comes after both the subscription and the command connection are up, so a mark
   * announced meanwhile is heard once, not heard and then read again.
   */
  async start(): Promise<void> {
    const waitMs = this.o.startWaitMs ?? 2_000;
    const listening = this.marks.listen((m) => this.emit(m)).catch((err) => this.o.log.warn('key_health_subscribe_failed', errorFields(err)));
    const waited = await Promise.race([
      listening.then(() => this.o.link.ready(waitMs)).then((up) => (up ? this.sync(false).then(() => true) : false)),
      new Promise<false>((r) => setTimeout(() => r(false), waitMs).unref()),
    ]);
    // Status changes from here on: a Redis that comes up later (or comes back) is read then.
    this.stopStatus = this.o.link.onStatus((up) => this.status(up));
    if (!this.o.link.up) this.status(false);
    else if (!waited) void this.sync(false);
    this.timer = setInterval(() => { if (this.o.link.up) void this.sync(false); }, this.o.resyncMs ?? 15_000);
    this.timer.unref();
  }

  announce(mark: HealthMark): void {
    const field = `${mark.scope}:${mark.ownerId}:${mark.id}:${mark.model ?? ''}`;
    this.mine.set(field, { mark, until: mark.ms > 0 ? Date.now() + mark.ms : null });
    if (!this.o.link.up) return;
    this.marks.put(mark)
      .then(() => { if (mark.ms <= 0 && this.mine.get(field)?.mark === mark) this.mine.delete(field); })
      .catch((err) => this.o.log.debug('key_health_write_failed', errorFields(err)));
  }

  countAbnormal(ownerId: number, level: number, rule: SwitchOverRule): void {
    // Away: the instance's own count decides (SwitchOverWindows keeps it).
    if (!this.o.link.up) return;
    this.marks.countAbnormal(ownerId, level, rule.threshold, rule.windowMs)
      .then((ms) => { if (ms > 0) this.emit({ scope: 'level', ownerId, id: level, state: 'switched', ms }); })
      .catch((err) => this.o.log.debug('key_health_write_failed', errorFields(err)));
  }

  onMark(listener: (mark: HealthMark) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    this.stopStatus?.();
    await this.syncing;
  }

  private emit(mark: HealthMark): void {
    for (const l of this.listeners) l(mark);
  }

  private status(up: boolean): void {
    if (this.closed) return;
    if (!up) {
      if (this.degraded) return;
      this.degraded = true;
      this.o.log.warn('key_health_per_instance', { message: 'Redis is away: sleeping keys and switch-over windows are kept per instance until it returns' });
      return;
    }
    if (this.degraded) {
      this.degraded = false;
      this.o.log.info('key_health_shared', { message: 'Redis is back: sleeping keys and switch-over windows are shared again' });
    }
    void this.sync(true);
  }

  /**
   * Reads the shared marks; after an outage (`replay`) first writes back this instance's own
   * marks that still hold and the clears it could not write, so what it learned while alone
   * reaches the others and a key woken meanwhile is not put back to sleep by the read.
   */
  private sync(replay: boolean): Promise<void> {
    // One at a time, in order: a replay asked for during a periodic read still runs.
    const run = async () => {
      try {
        if (replay) {
          const now = Date.now();
          const writes: Promise<void>[] = [];
          for (const [field, { mark, until }] of this.mine) {
            if (until !== null && until <= now) this.mine.delete(field);
            else writes.push(this.marks.put({ ...mark, ms: until === null ? 0 : until - now }).then(() => { if (until === null) this.mine.delete(field); }));
          }
          await Promise.all(writes);
        } else {
          const now = Date.now();
          for (const [field, { until }] of this.mine) if (until !== null && until <= now) this.mine.delete(field);
        }
        for (const m of await this.marks.read(this.o.owners())) this.emit(m);
      } catch (err) {
        this.o.log.debug('key_health_sync_failed', errorFields(err));
      }
    };
    const next = (this.syncing ?? Promise.resolve()).then(run);
    this.syncing = next;
    void next.then(() => { if (this.syncing === next) this.syncing = undefined; });
    return next;
  }
}
