import { afterAll } from 'vitest';
import { createLogger, type Logger } from '../../core/log';
import { connectRedis, type RedisLink } from '../../adapters/redis/link';
import { InstancePresence } from '../../adapters/redis/presence';
import { deleteKeys } from '../../testing/redis-keys';
import { testRedisUrl } from '../../testing/requirements';
import type { RedisAdmissionStore } from './redis/store';

/**
 * A Redis admission test file's link to the real Redis (TEST_REDIS_URL), under a key prefix of
 * its own, with this instance's presence; the stores pushed to `stores` are closed and every key
 * under the prefix removed after the file's tests.
 */
export function redisTestLink(name: string, log: Logger = createLogger(() => undefined, 'error')): { link: RedisLink; prefix: string; presence: InstancePresence; stores: RedisAdmissionStore[]; log: Logger } {
  const prefix = `test:${name}:${process.pid}:${Date.now()}:`;
  const link = connectRedis(testRedisUrl(), { prefix, log });
  const presence = new InstancePresence(link, log);
  const stores: RedisAdmissionStore[] = [];
  afterAll(async () => {
    await Promise.all(stores.map((s) => s.close()));
    await presence.stop();
    // A Redis that was never there (the file's Redis tests skipped) has nothing to clean.
    if (link.up) await deleteKeys(link.client, prefix);
    await link.close();
  });
  return { link, prefix, presence, stores, log };
}
