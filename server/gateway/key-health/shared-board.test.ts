import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { connectRedis, type RedisLink } from '../../adapters/redis/link';
import { parseMessage } from '../../adapters/redis/health-marks';
import { createLogger } from '../../core/log';
import { TcpRelay } from '../../testing/tcp-relay';
import type { HealthMark } from './board';
import { SharedHealthBoard } from './shared-board';
import { SwitchOverWindows } from './switch-over';
import { until } from '../../testing/until';
import { needs, testRedisUrl } from '../../testing/requirements';

const REDIS = new URL(testRedisUrl());
const prefix = `test:key-health:${process.pid}:${Date.now()}:`;
let opened: { link: RedisLink; board: SharedHealthBoard }[] = [];

interface Instance {
  board: SharedHealthBoard;
  link: RedisLink;
  heard: HealthMark[];
  lines: string[];
}

async function instance(url = REDIS.toString(), owners = [7]): Promise<Instance> {
  const lines: string[] = [];
  const log = createLogger((l) => lines.push(l), 'debug');
  const link = connectRedis(url, { prefix, log });
  const board = new SharedHealthBoard({ link, log, owners: () => owners, resyncMs: 60_000 });
  const heard: HealthMark[] = [];
  board.onMark((m) => heard.push(m));
  await board.start();
  opened.push({ link, board });
  return { board, link, heard, lines };
}

const sleeping = (id: number, ms: number): HealthMark => ({ scope: 'key', ownerId: 7, id, state: 'sleeping', ms });

afterEach(async () => {
  for (const o of opened) await o.board.close();
  await Promise.all(opened.map((o) => o.link.close()));
  opened = [];
});

describe('key health shared through Redis', needs('redis'), () => {
  afterAll(async () => {
    const link = connectRedis(REDIS.toString(), { prefix, log: createLogger(() => {}, 'error') });
    const keys = await link.client.keys(`${prefix}*`);
    if (keys.length) await link.client.del(...keys);
    await link.close();
  });

  it('tells the other instances at once, and one that starts later reads what still holds', async () => {
    const a = await instance();
    const b = await instance();
    const started = Date.now();
    a.board.announce(sleeping(12, 30_000));
    await until(() => b.heard.some((m) => m.id === 12));
    expect(Date.now() - started).toBeLessThan(1000);
    expect(b.heard).toEqual([expect.objectContaining({ scope: 'key', ownerId: 7, id: 12, state: 'sleeping' })]);
    // An instance does not hear its own announcement back.
    expect(a.heard).toEqual([]);

    const c = await instance();
    const late = c.heard.find((m) => m.id === 12)!;
    expect(late.ms).toBeGreaterThan(29_000);
    expect(late.ms).toBeLessThanOrEqual(30_000);

    // A clear (a key woken by hand) reaches the others and leaves nothing for later readers.
    a.board.announce(sleeping(12, 0));
    await until(() => b.heard.some((m) => m.id === 12 && m.ms === 0));
    const d = await instance();
    expect(d.heard.filter((m) => m.id === 12)).toEqual([]);
  });

  it('switches a Level over on every instance when abnormal results spread over them pass the threshold', async () => {
    const rule = { threshold: 5, windowMs: 60_000 };
    const boards = [await instance(), await instance(), await instance()];
    const windows = boards.map((i) => new SwitchOverWindows(rule, i.board));
    const now = Date.now();
    // Two each: no instance alone is over the threshold.
    for (let round = 0; round < 2; round++) {
      for (const w of windows) {
        expect(w.isSwitched(7, 1, Date.now())).toBe(false);
        w.noteAbnormal(7, 1, now);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    await until(() => windows.every((w) => w.isSwitched(7, 1, Date.now())));
    expect(windows.map((w) => w.isSwitched(7, 2, Date.now()))).toEqual([false, false, false]);
    expect(windows.map((w) => w.isSwitched(8, 1, Date.now()))).toEqual([false, false, false]);
    const heard = boards[0].heard.find((m) => m.scope === 'level')!;
    expect(heard).toMatchObject({ ownerId: 7, id: 1, state: 'switched', ms: 60_000 });
    // A later instance reads the switch once.
    const late = await instance();
    expect(new SwitchOverWindows(rule, late.board).isSwitched(7, 1, Date.now())).toBe(false);
    // start() waits at most 2 s for its first read; on a loaded machine the read lands after.
    await until(() => late.heard.some((m) => m.scope === 'level'), 10_000);
    expect(late.heard.find((m) => m.scope === 'level')).toMatchObject({ ownerId: 7, id: 1, state: 'switched' });
  });

  it('goes on per instance while Redis is cut, says so once, and shares again when it is back', async () => {
    const relay = new TcpRelay({ host: REDIS.hostname, port: Number(REDIS.port || 6379) });
    await relay.up();
    try {
      const via = new URL(REDIS.toString());
      via.host = `127.0.0.1:${relay.port}`;
      const a = await instance(via.toString());
      const b = await instance();
      expect(a.board.shared).toBe(true);

      await relay.down();
      await until(() => !a.link.up);
      expect(a.board.shared).toBe(false);
      // Alone: its own count still switches, its sleep is kept for later.
      const windows = new SwitchOverWindows({ threshold: 1, windowMs: 60_000 }, a.board);
      windows.noteAbnormal(7, 3, Date.now());
      windows.noteAbnormal(7, 3, Date.now());
      expect(windows.isSwitched(7, 3, Date.now())).toBe(true);
      a.board.announce(sleeping(21, 30_000));
      b.board.announce(sleeping(22, 30_000));
      await new Promise((r) => setTimeout(r, 300));
      expect(b.heard.filter((m) => m.id === 21)).toEqual([]);
      expect(a.heard.filter((m) => m.id === 22)).toEqual([]);
      const down = a.lines.filter((l) => l.includes('key_health_per_instance'));
      expect(down).toHaveLength(1);
      expect(down[0]).toContain('"level":"warn"');

      await relay.up();
      // Back: it reads what the others did meanwhile, and they learn what it did.
      await until(() => a.heard.some((m) => m.id === 22), 8000);
      await until(() => b.heard.some((m) => m.id === 21), 3000);
      expect(a.lines.filter((l) => l.includes('key_health_shared'))).toHaveLength(1);
      expect(a.lines.filter((l) => l.includes('key_health_per_instance'))).toHaveLength(1);
      expect(a.board.shared).toBe(true);
    } finally {
      await relay.down();
    }
  }, 30_000);
});

describe('health messages from other processes', () => {
  it('are checked before they touch anything', () => {
    const ok = { from: 'x', scope: 'key', owner: 7, id: 12, state: 'sleeping', ms: 1000 };
    expect(parseMessage(JSON.stringify(ok))).toEqual({ from: 'x', mark: { scope: 'key', ownerId: 7, id: 12, state: 'sleeping', ms: 1000 } });
    expect(parseMessage(JSON.stringify({ ...ok, scope: 'level', id: 0, state: 'switched' }))?.mark.id).toBe(0);
    expect(parseMessage(JSON.stringify({ ...ok, model: 'gpt-4o' }))?.mark.model).toBe('gpt-4o');
    for (const bad of [
      'not json', 'null', '[]',
      JSON.stringify({ ...ok, from: 1 }),
      JSON.stringify({ ...ok, scope: 'account' }),
      JSON.stringify({ ...ok, owner: 0 }),
      JSON.stringify({ ...ok, id: 0 }),
      JSON.stringify({ ...ok, id: 1.5 }),
      JSON.stringify({ ...ok, ms: -1 }),
      JSON.stringify({ ...ok, ms: 8 * 86_400_000 }),
      JSON.stringify({ ...ok, state: 'Sleeping|1' }),
      JSON.stringify({ ...ok, model: '' }),
    ]) expect(parseMessage(bad)).toBeNull();
  });
});
