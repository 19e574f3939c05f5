import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { connectRedis, type RedisLink } from '../../adapters/redis/link';
import { createLogger } from '../../core/log';
import { SharedHealthBoard } from './shared-board';
import { KeyCircuits } from './circuits';
import { KeyHealth } from './key-health';
import { KeyPool } from '../../state/provider-keys/key-pool';
import type { Db } from '../../adapters/storage/database';
import type { Vault } from '../../adapters/security/crypto';
import { until } from '../../testing/until';
import { needs, testRedisUrl } from '../../testing/requirements';

const REDIS = testRedisUrl();
const prefix = `test:circuits:${process.pid}:${Date.now()}:`;
const RULE = { failureThreshold: 2, openMs: 60_000, openMaxMs: 600_000, probeTimeoutMs: 1000 };
let opened: { link: RedisLink; board: SharedHealthBoard }[] = [];

async function instance() {
  const log = createLogger(() => {}, 'error');
  const link = connectRedis(REDIS, { prefix, log });
  const board = new SharedHealthBoard({ link, log, owners: () => [9], resyncMs: 60_000 });
  const pool = new KeyPool(undefined as unknown as Db, undefined as unknown as Vault);
  // Key health listens to the board before it starts, as the composition root does.
  const health = new KeyHealth(undefined as unknown as Db, pool, log, 60_000, 3_600_000, board, undefined, RULE);
  await board.start();
  opened.push({ link, board });
  return { circuits: health.circuits, pool, health };
}

afterEach(async () => {
  for (const o of opened) await o.board.close();
  await Promise.all(opened.map((o) => o.link.close()));
  opened = [];
});

afterAll(async () => {
  const link = connectRedis(REDIS, { prefix, log: createLogger(() => {}, 'error') });
  const keys = await link.client.keys(`${prefix}*`);
  if (keys.length) await link.client.del(...keys);
  await link.close();
});

const key = { id: 41, ownerId: 9, level: 1 };

describe('key circuits shared through Redis (REDIS_URL)', needs('redis'), () => {
  it('a key opened on one instance leaves rotation on the others and on one started later; its close reaches them all; a 429 sleep of the same key is kept apart', async () => {
    const a = await instance();
    const b = await instance();
    a.health.rateLimited({ ...key, name: 'k', provider: 'http://upstream.test', secret: 's', config: {} }, { 'retry-after': '60' });
    for (let i = 0; i < 2; i++) a.circuits.failed(key, undefined, 'ECONNREFUSED', Date.now());
    a.circuits.failed(key, 'gpt-x', 'upstream answered 503', Date.now());
    a.circuits.failed(key, 'gpt-x', 'upstream answered 503', Date.now());
    await until(() => b.circuits.stateOf(9, 41) === 'open' && b.circuits.stateOf(9, 41, 'gpt-x') === 'open');
    expect(b.circuits.admit(key, 'gpt-y', Date.now())).toEqual({ until: expect.any(Number) });
    const c = await instance();
    expect(c.circuits.stateOf(9, 41)).toBe('open');
    expect(c.circuits.stateOf(9, 41, 'gpt-x')).toBe('open');
    expect(c.pool.isSleeping(41)).toBe(true);
    a.circuits.succeeded(key, 'gpt-x', Date.now());
    await until(() => b.circuits.stateOf(9, 41) === 'healthy' && c.circuits.stateOf(9, 41, 'gpt-x') === 'healthy');
    expect(b.circuits.admit(key, 'gpt-x', Date.now())).toBe(true);
    // The close cleared the circuit marks only: the 429 sleep of the same key still holds for a newcomer.
    const d = await instance();
    expect(d.circuits.stateOf(9, 41)).toBe('healthy');
    expect(d.pool.isSleeping(41)).toBe(true);
  });

  it('marks its whole-key circuit under a model of its own, never one a client could name', () => {
    const announced: unknown[] = [];
    const circuits = new KeyCircuits({ ...RULE, failureThreshold: 1 }, { warn() {}, debug() {} }, {
      shared: true, announce: (m) => { announced.push(m); }, countAbnormal() {}, onMark: () => () => {},
    });
    circuits.failed(key, undefined, 'x', 0);
    expect(announced).toEqual([{ scope: 'key', ownerId: 9, id: 41, model: '*', state: 'open', ms: 60_000 }]);
  });
});
