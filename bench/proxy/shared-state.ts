/**
 * The Switchyard variant with shared state on (REDIS_URL): the same bundle, one instance, its
 * admission counters, key health and switch-over in Redis, measured beside the in-process one.
 * BENCH_REDIS_URL (else REDIS_URL, else the local Redis) names the Redis; the run's keys live
 * under their own prefix and are deleted at the end.
 */
import { Redis } from 'ioredis';
import { deleteKeys } from '../../server/testing/redis-keys';

export const benchRedisUrl = process.env.BENCH_REDIS_URL || process.env.REDIS_URL || 'redis://127.0.0.1:6379/0';
const prefix = `bench:proxy:${process.pid}:${Date.now()}:`;

/** Environment of the shared-state variant, added to the in-process one. */
export const sharedStateEnv = (): Record<string, string> => ({ REDIS_URL: benchRedisUrl, REDIS_PREFIX: prefix });

export async function deleteBenchKeys(): Promise<void> {
  const r = new Redis(benchRedisUrl, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 1000 });
  try {
    await r.connect();
    await deleteKeys(r, prefix);
  } catch {
    // No Redis: the variant was not measured and left nothing behind.
  } finally {
    r.disconnect();
  }
}
