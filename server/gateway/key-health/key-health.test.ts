import { describe, expect, it } from 'vitest';
import type { Db } from '../../adapters/storage/database';
import type { Vault } from '../../adapters/security/crypto';
import { createLogger } from '../../core/log';
import { KeyPool, type PooledKey } from '../../state/provider-keys/key-pool';
import type { HealthBoard, HealthMark } from './board';
import { KeyHealth } from './key-health';

/** Sleeps and wakes never reach the database: the pool and key health run without one here. */
function setup() {
  const announced: HealthMark[] = [];
  const listeners = new Set<(m: HealthMark) => void>();
  const board: HealthBoard = {
    shared: true,
    announce: (m) => { announced.push(m); },
    countAbnormal() {},
    onMark: (l) => { listeners.add(l); return () => listeners.delete(l); },
  };
  const pool = new KeyPool(undefined as unknown as Db, undefined as unknown as Vault);
  const health = new KeyHealth(undefined as unknown as Db, pool, createLogger(() => {}, 'error'), 60_000, 3_600_000, board);
  const hear = (m: HealthMark) => { for (const l of listeners) l(m); };
  return { pool, health, announced, hear };
}

const key = { id: 12, ownerId: 7, level: 1, name: 'k', provider: 'http://upstream.test', secret: 's', config: {} } as PooledKey;

describe('key health on a shared board', () => {
  it('announces a 429 sleep with Retry-After, and the clear when the key is woken by hand', () => {
    const { pool, health, announced } = setup();
    expect(health.rateLimited(key, { 'retry-after': '30' })).toBe(30_000);
    expect(pool.isSleeping(12)).toBe(true);
    expect(announced).toEqual([{ scope: 'key', ownerId: 7, id: 12, state: 'sleeping', ms: 30_000 }]);
    pool.wake(12);
    expect(pool.isSleeping(12)).toBe(false);
    expect(announced[1]).toEqual({ scope: 'key', ownerId: 7, id: 12, state: 'sleeping', ms: 0 });
    // Waking a key that is not asleep tells nobody.
    pool.wake(12);
    expect(announced).toHaveLength(2);
  });

  it('puts a key to sleep when another instance did, and wakes it on a clear without announcing it back', () => {
    const { pool, announced, hear } = setup();
    hear({ scope: 'key', ownerId: 7, id: 12, state: 'sleeping', ms: 30_000 });
    const until = pool.sleepingUntil(12)!;
    expect(until - Date.now()).toBeGreaterThan(29_000);
    // A shorter sleep heard later does not cut a longer one.
    hear({ scope: 'key', ownerId: 7, id: 12, state: 'sleeping', ms: 1000 });
    expect(pool.sleepingUntil(12)).toBe(until);
    hear({ scope: 'key', ownerId: 7, id: 12, state: 'sleeping', ms: 0 });
    expect(pool.isSleeping(12)).toBe(false);
    expect(announced).toEqual([]);
    // Level marks, per-model marks and states it does not know leave keys alone.
    hear({ scope: 'level', ownerId: 7, id: 12, state: 'switched', ms: 30_000 });
    hear({ scope: 'key', ownerId: 7, id: 12, model: 'gpt-4o', state: 'sleeping', ms: 30_000 });
    hear({ scope: 'key', ownerId: 7, id: 12, state: 'open', ms: 30_000 });
    expect(pool.isSleeping(12)).toBe(false);
  });

  it('a key woken by hand after another instance put it to sleep clears the shared mark too', () => {
    const { pool, announced, hear } = setup();
    hear({ scope: 'key', ownerId: 7, id: 12, state: 'sleeping', ms: 30_000 });
    pool.wake(12);
    expect(announced).toEqual([{ scope: 'key', ownerId: 7, id: 12, state: 'sleeping', ms: 0 }]);
  });
});
