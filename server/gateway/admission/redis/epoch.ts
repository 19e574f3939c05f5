import type { RedisLink } from '../../../adapters/redis/link';
import { currentEpoch } from '../../../adapters/redis/incarnation';

/**
 * The life of Redis this instance has joined, and the full names of the admission keys in it:
 * after a Redis restart (a new run_id) every key lives under a new epoch, loaded from
 * PostgreSQL, behind the deployment's prefix (REDIS_PREFIX).
 */
export class SharedEpoch {
  /** The epoch joined; 0 until joined. */
  current = 0;
  /** The Redis server's run_id when this instance last joined. */
  private run = '';

  constructor(private readonly link: RedisLink) {}

  /** (Re)joins Redis's current epoch; `restarted` when Redis began a new life since the last join. */
  async join(): Promise<{ epoch: number; restarted: boolean }> {
    const { epoch, run } = await currentEpoch(this.link);
    const restarted = this.run !== '' && (run !== this.run || epoch !== this.current);
    this.current = epoch;
    this.run = run;
    return { epoch, restarted };
  }

  /** A counter key (admission/store.ts's `counterKeys`) or the `owners` map, by its full name in this epoch. */
  key(name: string): string {
    return `${this.link.prefix}e${this.current}:${name}`;
  }

  /** A tenant's reservations: `res` and `rx` (scripts.ts). */
  tenantKeys(ownerId: number): [string, string] {
    return [this.key(`{o:${ownerId}}:res`), this.key(`{o:${ownerId}}:rx`)];
  }
}
