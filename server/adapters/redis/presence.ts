import { randomUUID } from 'node:crypto';
import type { Logger } from '../../core/log';
import type { RedisLink } from './link';

export interface PresenceOptions {
  /** How often this instance says it is alive (ms). */
  intervalMs?: number;
  /** An instance not heard from for this long is counted out (ms). */
  staleMs?: number;
}

/**
 * Which gateway instances share this Redis: each one refreshes its own entry in one sorted set
 * (score = last heartbeat) and counts the fresh entries. The count is what an instance divides
 * its rate limits by while Redis is away (limit ÷ live instances), so it is the count last seen
 * before the outage, never less than one.
 */
export class InstancePresence {
  /** This instance's ID in shared state (also names its unflushed charges). */
  readonly id = randomUUID();
  private liveCount = 1;
  private liveIds: string[] = [this.id];
  private timer: NodeJS.Timeout | undefined;
  private readonly key: string;
  private readonly intervalMs: number;
  private readonly staleMs: number;

  constructor(private readonly link: RedisLink, private readonly log: Logger, opts: PresenceOptions = {}) {
    this.key = `${link.prefix}instances`;
    this.intervalMs = opts.intervalMs ?? 2_000;
    this.staleMs = opts.staleMs ?? 10_000;
  }

  /** Instances alive at the last heartbeat (this one included). */
  get live(): number {
    return this.liveCount;
  }

  /** IDs of the instances alive at the last heartbeat. */
  get ids(): readonly string[] {
    return this.liveIds;
  }

  start(): Promise<void> {
    this.timer = setInterval(() => void this.beat(), this.intervalMs);
    this.timer.unref();
    return this.beat();
  }

  /** One heartbeat now (also after a reconnect, so the count is fresh when it matters). */
  async beat(): Promise<void> {
    if (!this.link.up) return;
    const now = Date.now();
    try {
      const res = await this.link.client.multi()
        .zadd(this.key, now, this.id)
        .zremrangebyscore(this.key, '-inf', now - this.staleMs)
        .zrange(this.key, '0', '-1')
        .pexpire(this.key, this.staleMs * 6)
        .exec();
      const ids = res?.[2]?.[1];
      if (Array.isArray(ids) && ids.length > 0) {
        this.liveIds = ids as string[];
        this.liveCount = ids.length;
      }
    } catch (err) {
      this.log.debug('redis_presence_failed', { error: (err as Error).message });
    }
  }

  /** Leaves the set, so the others stop counting this instance at once. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (!this.link.up) return;
    await this.link.client.zrem(this.key, this.id).catch(() => undefined);
  }
}
