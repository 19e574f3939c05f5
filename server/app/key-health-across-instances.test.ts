import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis } from '../adapters/redis/link';
import { generateAccountKey } from '../adapters/security/crypto';
import { createLogger } from '../core/log';
import { freshDatabaseUrl } from '../testing/database';
import { startMockUpstream, type MockUpstream } from '../testing/mock-upstream';
import { spawnServer, type RunningServer } from '../testing/spawn';
import { needs, testRedisUrl } from '../testing/requirements';

const REDIS = testRedisUrl();
const prefix = `test:kh-instances:${process.pid}:${Date.now()}:`;
const rootKey = generateAccountKey();
const sleepy = 'sk-up-sleepy-0001-aaaaaaaaaaaa';
const steady = 'sk-up-steady-0002-aaaaaaaaaaaa';
const failing = 'sk-up-failing-0003-aaaaaaaaaaa';
const backup = 'sk-up-backup-0004-aaaaaaaaaaaa';
const revoked = 'sk-up-revoked-0005-aaaaaaaaaaa';
const fine = 'sk-up-fine-0006-aaaaaaaaaaaaaa';

let mock: MockUpstream;
let drop: () => Promise<void> = async () => {};
let servers: RunningServer[] = [];
const keyIds: Record<string, number> = {};
const users: Record<'level1' | 'level3' | 'level5', string> = { level1: '', level3: '', level5: '' };

const admin = (url: string, method: string, path: string, body?: unknown) => fetch(`${url}${path}`, {
  method,
  headers: { authorization: `Bearer ${rootKey}`, 'content-type': 'application/json' },
  body: body === undefined ? undefined : JSON.stringify(body),
});
const chat = (s: RunningServer, key: string) => fetch(`${s.url}/v1/chat/completions`, {
  method: 'POST',
  headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
  body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] }),
});
const hits = (credential: string) => mock.requests.filter((r) => r.credential === credential).length;
const sleepingOn = async (s: RunningServer): Promise<number[]> => {
  const r = await admin(s.url, 'GET', '/x-conf');
  expect(r.status).toBe(200);
  return ((await r.json()).SleepingKeys as { ID: number }[]).map((k) => k.ID);
};

describe.runIf(process.env.TEST_DATABASE_URL)('key health across three instances (PostgreSQL, Redis)', needs('redis'), () => {
  beforeAll(async () => {
    mock = await startMockUpstream();
    const db = await freshDatabaseUrl();
    drop = db.drop;
    const env = {
      DATABASE_URL: db.url, ROOT_KEY: rootKey, MASTER_KEY: 'switchyard-shared-master-key-0123',
      REDIS_URL: REDIS, REDIS_PREFIX: prefix, SWITCH_OVER_THRESHOLD: '5', SWITCH_OVER_WINDOW_MS: '60000',
    };
    servers.push(await spawnServer(env, 90_000));
    const first = servers[0].url;
    // Level 1: a key upstream rate-limits and a good one. Level 3: a failing key with Level 4
    // as its backup. Level 5: a key upstream refuses and a good one.
    for (const [level, secret] of [[1, sleepy], [1, steady], [3, failing], [4, backup], [5, revoked], [5, fine]] as const) {
      const r = await admin(first, 'POST', '/x-keys', { Level: level, Provider: mock.url, SecretKey: secret, Status: true });
      expect(r.status, await r.clone().text()).toBe(201);
      keyIds[secret] = (await r.json()).Key.ID;
    }
    expect((await admin(first, 'PUT', '/x-config', { SWITCH_OVER: '3=4' })).status).toBe(200);
    for (const [name, level] of [['level1', 1], ['level3', 3], ['level5', 5]] as const) {
      const handle = `kh${name}${process.pid % 10_000}`;
      const r = await admin(first, 'POST', '/x-users', { Name: handle, Email: `${handle}@example.test`, CreditGranted: 50, Level: level });
      expect(r.status, await r.clone().text()).toBe(201);
      users[name] = (await r.json()).User.SecretKey;
    }
    servers.push(...await Promise.all([spawnServer(env, 90_000), spawnServer(env, 90_000)]));
  }, 240_000);

  afterAll(async () => {
    for (const s of servers) expect(await s.stop()).toBe(0);
    for (const s of servers) expect(s.stdout()).not.toContain('key_health_per_instance');
    await mock?.close();
    await drop();
    const link = connectRedis(REDIS, { prefix, log: createLogger(() => {}, 'error') });
    const keys = await link.client.keys(`${prefix}*`);
    if (keys.length) await link.client.del(...keys);
    await link.close();
  }, 60_000);

  it('a key put to sleep by a 429 on one instance is skipped by the others within a second, and shows in their /x-conf', async () => {
    mock.behave(sleepy, { status: 429, retryAfter: 30 });
    const [one, two, three] = servers;
    // Every instance would pick the first key of Level 1 first.
    const r = await chat(one, users.level1);
    expect(r.status, await r.text()).toBe(200);
    expect(hits(sleepy)).toBe(1);
    expect(await sleepingOn(one)).toEqual([keyIds[sleepy]]);

    const started = Date.now();
    for (const s of [two, three]) {
      while (!(await sleepingOn(s)).includes(keyIds[sleepy])) {
        expect(Date.now() - started).toBeLessThan(1000);
        await new Promise((res) => setTimeout(res, 50));
      }
    }
    for (const s of [two, three]) {
      for (let i = 0; i < 3; i++) expect((await chat(s, users.level1)).status).toBe(200);
    }
    expect(hits(sleepy)).toBe(1);
    expect(hits(steady)).toBe(7);
  });

  it('more than five abnormal results spread over the three instances switch the Level over on all of them', async () => {
    mock.behave(failing, { status: 500 });
    // Two on each instance: six in all, while no instance alone saw more than five.
    for (let round = 0; round < 2; round++) {
      for (const s of servers) {
        const r = await chat(s, users.level3);
        expect(r.status, await r.text()).toBe(200);
      }
    }
    expect(hits(failing)).toBe(6);
    expect(hits(backup)).toBe(6);
    await new Promise((res) => setTimeout(res, 500));
    // Switched over everywhere: Level 4 first, the failing Level 3 is not tried.
    for (const s of servers) expect((await chat(s, users.level3)).status).toBe(200);
    expect(hits(failing)).toBe(6);
    expect(hits(backup)).toBe(9);
  });

  it('a key disabled by an upstream 401 on one instance leaves the others within a second (the change feed)', async () => {
    mock.behave(revoked, { status: 401 });
    const [one, two, three] = servers;
    expect((await chat(one, users.level5)).status).toBe(200);
    expect(hits(revoked)).toBe(1);
    const started = Date.now();
    for (;;) {
      const r = await admin(two.url, 'GET', '/x-conf');
      if (((await r.json()).DisabledKeys as { ID: number }[]).some((k) => k.ID === keyIds[revoked])) break;
      expect(Date.now() - started).toBeLessThan(1000);
      await new Promise((res) => setTimeout(res, 50));
    }
    await new Promise((res) => setTimeout(res, 1000 - (Date.now() - started)));
    for (const s of [two, three]) {
      for (let i = 0; i < 2; i++) expect((await chat(s, users.level5)).status).toBe(200);
    }
    expect(hits(revoked)).toBe(1);
    expect(hits(fine)).toBe(5);
  });
});
