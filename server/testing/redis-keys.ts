import type { Redis } from 'ioredis';

/** Deletes every key under a test's own prefix (tests share the one Redis). */
export async function deleteKeys(client: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
    cursor = next;
    if (keys.length) await client.del(...keys);
  } while (cursor !== '0');
}
