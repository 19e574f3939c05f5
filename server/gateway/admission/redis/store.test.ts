import { afterAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { createLogger } from '../../../core/log';
import { needs } from '../../../testing/requirements';
import { connectRedis } from '../../../adapters/redis/link';
import { InstancePresence } from '../../../adapters/redis/presence';
import { describeAdmissionStore, FakeBases, T0 } from '../store.contract';
import { counterKeys, periodOf, type AdmissionRequest } from '../store';
import { MemoryAdmissionStore } from '../memory-store';
import { RedisAdmissionStore } from './store';
import { redisTestLink } from '../test-fixture';

const { link, presence, stores, log } = redisTestLink('admission', createLogger((l) => process.env.DEBUG_STORE && console.log(l), 'error'));

describeAdmissionStore('redis', async (env) => {
  const store = new RedisAdmissionStore(link, env.loader, { refreshMs: env.refreshMs, onThreshold: env.onThreshold, log, presence });
  stores.push(store);
  if (!(await store.whenReady(5000))) throw new Error('Redis store did not join shared state');
  return store;
}, undefined, needs('redis'));

describe('RedisAdmissionStore across a Redis restart and an outage', () => {
  // A Redis of this test's own, so it can be stopped and started again without touching the shared one.
  let server: ChildProcess | undefined;
  const startRedis = async (port: number) => {
    server = spawn('redis-server', ['--port', String(port), '--save', '', '--appendonly', 'no', '--bind', '127.0.0.1'], { stdio: 'ignore' });
    for (let i = 0; i < 100; i++) {
      const ok = await new Promise<boolean>((resolve) => {
        const s = connect(port, '127.0.0.1', () => { s.destroy(); resolve(true); });
        s.on('error', () => resolve(false));
      });
      if (ok) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('redis-server did not start');
  };
  const stopRedis = async () => {
    const s = server;
    server = undefined;
    if (!s || s.exitCode !== null) return;
    const exited = new Promise((r) => s.once('exit', r));
    s.kill('SIGKILL');
    await exited;
  };
  afterAll(stopRedis);

  it('refuses money claims while away, serves the rest at limit ÷ live instances, and reloads every base from the database after a restart', needs('redis-server', { timeout: 30_000 }), async () => {
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    await startRedis(port);
    const lines: string[] = [];
    const own = connectRedis(`redis://127.0.0.1:${port}`, { prefix: 'restart:', log: createLogger((l) => lines.push(l), 'info') });
    const ownLog = createLogger((l) => lines.push(l), 'info');
    const ownPresence = new InstancePresence(own, ownLog);
    const loader = new FakeBases();
    loader.credits.set(1, 10);
    const store = new RedisAdmissionStore(own, loader, { refreshMs: 3_600_000, log: ownLog, presence: ownPresence });
    try {
      expect(await store.whenReady(5000)).toBe(true);
      const now = Date.now();
      const credit = { key: counterKeys.credit(5, 1), accountId: 1, floor: 0, lowAt: null };
      const rpm = { key: counterKeys.rate(5, 1, 'rpm'), name: 'RPM', kind: 'requests' as const, windowMs: 60_000, limit: 4 };
      let serial = 0;
      const request = (fields: Partial<AdmissionRequest>): AdmissionRequest => ({
        id: `restart-${++serial}`, ownerId: 5, credit: null, spend: [], rates: [], amount: 0, tokens: 0, now: Date.now(), expiresAt: now + 600_000, ...fields,
      });
      const a = request({ credit, amount: 3 });
      expect(await store.admit(a)).toBeNull();
      store.settle(a, { cost: 2, tokens: 0 }, now);
      await store.drain();
      expect(store.credit(credit.key)).toEqual({ spendable: 8, reserved: 0 });
      expect(loader.creditLoads).toBe(1);

      // Redis goes away: money is refused, the rest is served by this instance alone.
      await stopRedis();
      for (let i = 0; i < 100 && !store.degraded; i++) await new Promise((r) => setTimeout(r, 20));
      expect(store.degraded).toBe(true);
      expect(await store.admit(request({ credit, amount: 1 }))).toMatchObject({ kind: 'unavailable' });
      const served = [];
      for (let i = 0; i < 6; i++) served.push(await store.admit(request({ rates: [rpm] })));
      expect(served.filter((v) => v === null)).toHaveLength(4);
      expect(lines.filter((l) => l.includes('shared_state')).join('\n')).toContain('"event":"shared_state_degraded"');

      // It comes back empty (a restart): a new epoch, every base read from the database again.
      // The database meanwhile wrote the charge: 10 − 2.
      loader.credits.set(1, 8);
      await startRedis(port);
      for (let i = 0; i < 200 && store.degraded; i++) await new Promise((r) => setTimeout(r, 25));
      expect(store.degraded, lines.join('\n')).toBe(false);
      expect(lines.filter((l) => l.includes('shared_state_recovered')).join('\n')).toContain('"redis_restarted":true');
      const b = request({ credit, amount: 5 });
      expect(await store.admit(b)).toBeNull();
      expect(loader.creditLoads).toBe(2);
      expect(store.credit(credit.key)).toEqual({ spendable: 8, reserved: 5 });
      expect(await store.admit(request({ credit, amount: 4 }))).toMatchObject({ kind: 'credit', available: 3 });
    } finally {
      await store.close();
      await ownPresence.stop();
      await own.close();
    }
  });
});

describe('RedisAdmissionStore across instances', needs('redis'), () => {
  it('an account changed through an instance that never served it is reloaded by the one that did', async () => {
    const loader = new FakeBases();
    loader.credits.set(3, 5);
    const serving = new RedisAdmissionStore(link, loader, { refreshMs: 3_600_000, log, presence });
    const other = new RedisAdmissionStore(link, loader, { refreshMs: 3_600_000, log, presence });
    stores.push(serving, other);
    expect(await serving.whenReady(5000)).toBe(true);
    expect(await other.whenReady(5000)).toBe(true);
    const ownerId = 900_000 + Math.floor(Math.random() * 90_000);
    const credit = { key: counterKeys.credit(ownerId, 3), accountId: 3, floor: 0, lowAt: null };
    const now = Date.now();
    const request = (id: string): AdmissionRequest => ({ id, ownerId, credit, spend: [], rates: [], amount: 4, tokens: 0, now, expiresAt: now + 60_000 });
    expect(await serving.admit(request(`x-${ownerId}-1`))).toBeNull();
    expect(await serving.admit(request(`x-${ownerId}-2`))).toMatchObject({ kind: 'credit', available: 1 });
    loader.credits.set(3, 25); // a grant, made through the other instance
    other.invalidate(3);
    await other.drain();
    expect(await serving.admit(request(`x-${ownerId}-3`))).toBeNull();
    expect(loader.creditLoads).toBe(2);
  });
});

describe('RedisAdmissionStore batches (one script per tenant and event-loop turn)', needs('redis'), () => {
  it('decides turns of mixed admissions, settles and releases exactly as the in-process store does', async () => {
    const ownerId = 800_000 + Math.floor(Math.random() * 90_000);
    const memBases = new FakeBases();
    const redisBases = new FakeBases();
    for (const b of [memBases, redisBases]) {
      b.credits.set(1, 12);
      b.credits.set(2, 4);
    }
    const mem = new MemoryAdmissionStore(memBases, { refreshMs: 3_600_000 });
    const red = new RedisAdmissionStore(link, redisBases, { refreshMs: 3_600_000, log, presence });
    stores.push(red);
    expect(await red.whenReady(5000)).toBe(true);
    const day = periodOf('day', T0);
    const accounts = [1, 2].map((accountId) => ({
      credit: { key: counterKeys.credit(ownerId, accountId), accountId, floor: 0.1, lowAt: null },
      spend: [{
        key: counterKeys.spend(ownerId, accountId, day.period), accountId, ownerId, dna: `.${ownerId}.${accountId}.`, kind: 'day' as const, ...day,
        cap: accountId === 1 ? 5 : 50, code: 'daily_limit_reached' as const, alertAt: null,
      }],
      rates: [
        { key: counterKeys.rate(ownerId, accountId, 'rpm'), name: 'RPM', kind: 'requests' as const, windowMs: 60_000, limit: 12 },
        { key: counterKeys.rate(ownerId, accountId, 'tpm'), name: 'TPM', kind: 'tokens' as const, windowMs: 60_000, limit: 2500 },
      ],
    }));
    // The same claim objects for every request of an account, as the gateway's profiles share them.
    const request = (i: number, n: number, now: number, amount: number, tokens: number): AdmissionRequest => ({
      id: `eq-${ownerId}-${n}`, ownerId, ...accounts[i], amount, tokens, now, expiresAt: now + 600_000,
    });
    let seed = 7;
    const rand = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    // Bases loaded first in both, so every later admission is one batch step.
    for (const i of [0, 1]) {
      expect(await mem.admit(request(i, -1 - i, T0, 0, 0))).toBeNull();
      expect(await red.admit(request(i, -1 - i, T0, 0, 0))).toBeNull();
    }
    const open: { m: AdmissionRequest; r: AdmissionRequest }[] = [];
    let serial = 0;
    const refused = new Map<string, number>();
    for (let turn = 0; turn < 40; turn++) {
      const now = T0 + turn * 1500;
      const memVerdicts: unknown[] = [];
      const redisVerdicts: Promise<unknown>[] = [];
      const admitted: { m: AdmissionRequest; r: AdmissionRequest; k: number }[] = [];
      // One turn: all of these are made before the store's batch goes out.
      for (let op = 0; op < 6; op++) {
        const x = rand();
        if (x < 0.55 || open.length === 0) {
          const i = rand() < 0.5 ? 0 : 1;
          const n = ++serial;
          const amount = Math.round(rand() * 60) / 100;
          const tokens = Math.floor(rand() * 300);
          const m = request(i, n, now, amount, tokens);
          const r = request(i, n, now, amount, tokens);
          memVerdicts.push(mem.admit(m));
          redisVerdicts.push(Promise.resolve(red.admit(r)));
          admitted.push({ m, r, k: memVerdicts.length - 1 });
        } else {
          const { m, r } = open.splice(Math.floor(rand() * open.length), 1)[0];
          if (x < 0.85) {
            const actual = { cost: Math.round(rand() * 80) / 100, tokens: Math.floor(rand() * 400) };
            mem.settle(m, actual, now);
            red.settle(r, actual, now);
          } else {
            mem.release(m, now);
            red.release(r, now);
          }
        }
      }
      const got = await Promise.all(redisVerdicts);
      const kinds = (vs: unknown[]) => vs.map((v) => (v === null ? 'ok' : `${(v as { kind: string }).kind}:${(v as { claim?: { name?: string; accountId?: number } }).claim?.name ?? (v as { claim?: { accountId?: number } }).claim?.accountId}`));
      expect(kinds(got), `turn ${turn}`).toEqual(kinds(memVerdicts));
      const memKinds = kinds(memVerdicts);
      for (const a of admitted) {
        if (memVerdicts[a.k] === null) open.push(a);
        else refused.set(memKinds[a.k], (refused.get(memKinds[a.k]) ?? 0) + 1);
      }
      await red.drain();
      for (const acc of accounts) {
        const mc = mem.credit(acc.credit.key)!;
        const rc = red.credit(acc.credit.key)!;
        expect(rc.spendable, `turn ${turn}`).toBeCloseTo(mc.spendable, 9);
        expect(rc.reserved, `turn ${turn}`).toBeCloseTo(mc.reserved, 9);
        expect(red.spend(acc.spend[0].key)!.spent).toBeCloseTo(mem.spend(acc.spend[0].key)!.spent, 9);
        for (const c of acc.rates) expect(red.rateUsed(c, now), `turn ${turn} ${c.name}`).toBe(mem.rateUsed(c, now));
      }
    }
    // The sequence exercised admissions and every kind of refusal.
    const refusals = [...refused.values()].reduce((x, y) => x + y, 0);
    expect([...refused.keys()].map((k) => k.split(':')[0]).sort(), JSON.stringify([...refused])).toEqual(expect.arrayContaining(['credit', 'rate', 'spend']));
    expect(serial - refusals, JSON.stringify([...refused])).toBeGreaterThan(30);
  });

  it('sends one script for the admissions and settles of one tenant made in the same turn', async () => {
    const ownerId = 700_000 + Math.floor(Math.random() * 90_000);
    const bases = new FakeBases();
    bases.credits.set(4, 100);
    const store = new RedisAdmissionStore(link, bases, { refreshMs: 3_600_000, log, presence });
    stores.push(store);
    expect(await store.whenReady(5000)).toBe(true);
    const credit = { key: counterKeys.credit(ownerId, 4), accountId: 4, floor: 0, lowAt: null };
    const rates = [{ key: counterKeys.rate(ownerId, 4, 'rpm'), name: 'RPM', kind: 'requests' as const, windowMs: 60_000, limit: 1000 }];
    const now = Date.now();
    const request = (n: number): AdmissionRequest => ({ id: `one-${ownerId}-${n}`, ownerId, credit, spend: [], rates, amount: 1, tokens: 0, now, expiresAt: now + 60_000 });
    const first = request(0);
    expect(await store.admit(first)).toBeNull();
    const sent: string[] = [];
    const send = link.client.sendCommand.bind(link.client);
    link.client.sendCommand = ((command: { name: string }, ...rest: unknown[]) => {
      sent.push(command.name);
      return (send as (...a: unknown[]) => unknown)(command, ...rest);
    }) as typeof link.client.sendCommand;
    try {
      store.settle(first, { cost: 0.5, tokens: 0 }, now);
      const verdicts = await Promise.all(Array.from({ length: 20 }, (_, i) => store.admit(request(i + 1))));
      expect(verdicts.every((v) => v === null)).toBe(true);
      expect(sent.filter((name) => name === 'evalsha' || name === 'eval')).toHaveLength(1);
    } finally {
      link.client.sendCommand = send;
    }
    await store.drain();
    expect(store.credit(credit.key)).toEqual({ spendable: 99.5, reserved: 20 });
    expect(store.rateUsed(rates[0], now)).toBe(21);
    // An ID already open is refused within the same turn too.
    const again = await Promise.allSettled([store.admit(request(100)), store.admit(request(100))]);
    expect(again[0]).toMatchObject({ status: 'fulfilled', value: null });
    expect(again[1]).toMatchObject({ status: 'rejected', reason: { message: expect.stringContaining('already open') } });
  });
});
