import type { RedisLink } from './link';

/**
 * Compare-and-bump: the epoch changes exactly when the Redis server's run_id differs from the
 * one recorded with it, i.e. after a restart (with or without persistence) or on first use.
 */
const BUMP = `
local run = redis.call('HGET', KEYS[1], 'run')
if run ~= ARGV[1] then
  redis.call('HSET', KEYS[1], 'run', ARGV[1])
  return redis.call('HINCRBY', KEYS[1], 'epoch', 1)
end
return tonumber(redis.call('HGET', KEYS[1], 'epoch'))
`;

/**
 * Which life of the Redis server shared money state belongs to. Money keys carry the epoch in
 * their names, so state restored from a snapshot after a restart (older than what PostgreSQL
 * has since recorded) is never read: a new epoch starts empty and every counter is loaded
 * from PostgreSQL again; the old keys expire on their own.
 */
export async function currentEpoch(link: RedisLink): Promise<{ epoch: number; run: string }> {
  const info = await link.client.info('server');
  const run = /run_id:([0-9a-f]+)/.exec(info)?.[1] ?? 'unknown';
  const epoch = await link.client.eval(BUMP, 1, `${link.prefix}epoch`, run);
  // The run_id tells a restart apart from a cut connection even when an empty Redis starts the epochs over.
  return { epoch: Number(epoch), run };
}
