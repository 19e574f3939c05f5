import { afterAll, describe, expect, it } from 'vitest';
import { connectRedis } from '../../../adapters/redis/link';
import { InstancePresence } from '../../../adapters/redis/presence';
import { testRedisUrl, needs } from '../../../testing/requirements';
import { FakeBases, T0 } from '../store.contract';
import { counterKeys, type AdmissionRequest, type CreditClaim, type RateClaim } from '../store';
import { RedisAdmissionStore } from './store';
import { redisTestLink } from '../test-fixture';

/**
 * Issue #30, "credit left held across instances": a call that has ended holds nothing on any
 * instance. Two stores on one Redis, each an instance of its own (its own connection and
 * presence), as behind a load balancer: the client's next call lands on the other instance
 * the moment its previous call is settled on the first.
 */
const { link, prefix, presence, stores, log } = redisTestLink('ended-calls');
const other = connectRedis(testRedisUrl(), { prefix, log });
const otherPresence = new InstancePresence(other, log);
const otherStores: RedisAdmissionStore[] = [];
// Runs before the fixture's own (after-hooks run last registered first): the other instance's stores close while its link is up.
afterAll(async () => {
  await Promise.all(otherStores.map((s) => s.close()));
  await otherPresence.stop();
  await other.close();
});

let ownerSerial = 800_000 + Math.floor(Math.random() * 90_000);

async function instance(loader: FakeBases, second: boolean): Promise<RedisAdmissionStore> {
  const store = new RedisAdmissionStore(second ? other : link, loader, { refreshMs: 3_600_000, log, presence: second ? otherPresence : presence });
  (second ? otherStores : stores).push(store);
  expect(await store.whenReady(5000)).toBe(true);
  return store;
}

const FLOOR = 2;
/** What a call reserves (its maximum cost) and what it costs (its answer was shorter). */
const MAX_COST = 1.74;
const COST = 0.7;

describe('RedisAdmissionStore: a settled call holds nothing on another instance', needs('redis'), () => {
  it('the next call, on another instance right after the settle, is admitted against what is really left (20 in a row)', async () => {
    const refusals: string[] = [];
    for (let round = 0; round < 20; round++) {
      const ownerId = ++ownerSerial;
      const loader = new FakeBases();
      // Room above the floor for the first call and its cost, and for a second call: not for a second while the first is still held.
      const credit = FLOOR + MAX_COST + COST + 0.3;
      loader.credits.set(1, credit);
      const claim: CreditClaim = { key: counterKeys.credit(ownerId, 1), accountId: 1, floor: FLOOR, lowAt: null };
      const request = (id: string, now: number): AdmissionRequest => ({
        id: `ended-${ownerId}-${id}`, ownerId, credit: claim, spend: [], rates: [], amount: MAX_COST, tokens: 0, now, expiresAt: now + 600_000,
      });
      const [a, b] = round % 2 === 0 ? [await instance(loader, false), await instance(loader, true)] : [await instance(loader, true), await instance(loader, false)];
      const now = T0 + round;
      const first = request('first', now);
      expect(await a.admit(first)).toBeNull();
      a.settle(first, { cost: COST, tokens: 0 }, now + 1);
      // What the call's answer waits for before it ends: the settle applied in Redis.
      const applied = a.applied(first);
      expect(applied).toBeInstanceOf(Promise);
      // The client calls again, on the other instance, as soon as it can.
      const verdict = await b.admit(request('second', now + 1));
      await applied;
      expect(a.applied(first)).toBeUndefined();
      if (verdict) refusals.push(`round ${round}: ${JSON.stringify({ ...verdict, claim: undefined })}`);
      await a.drain();
      await b.drain();
      expect(a.credit(claim.key)?.spendable).toBeCloseTo(credit - COST, 9);
    }
    expect(refusals).toEqual([]);
  });

  it('the last call under a lease, near the floor, ends the lease: what it held is spendable on the other instance at once', async () => {
    const ownerId = ++ownerSerial;
    const loader = new FakeBases();
    loader.credits.set(1, 260);
    const claim: CreditClaim = { key: counterKeys.credit(ownerId, 1), accountId: 1, floor: 0, lowAt: null };
    // One claim set for all its calls, as an account profile gives them.
    const rates: RateClaim[] = [];
    let serial = 0;
    const request = (now: number, amount = 1): AdmissionRequest => ({
      id: `ended-lease-${ownerId}-${++serial}`, ownerId, credit: claim, spend: [], rates, amount, tokens: 0, now, expiresAt: now + 600_000,
    });
    const a = await instance(loader, false);
    const b = await instance(loader, true);
    // A busy account (one call a millisecond) is admitted under leases on the first instance.
    const admitted: AdmissionRequest[] = [];
    let local = 0;
    for (let i = 0; i < 200; i++) {
      const r = request(T0 + i);
      const v = a.admit(r);
      if (!(v instanceof Promise)) local++;
      if ((await v) === null) admitted.push(r);
      if (i % 10 === 9) await new Promise((res) => setImmediate(res));
    }
    expect(admitted).toHaveLength(200);
    expect(local).toBeGreaterThan(0);
    // Every call ends, each costing what it held: 60 left, nothing in progress.
    for (const r of admitted) a.settle(r, { cost: 1, tokens: 0 }, T0 + 200);
    await a.applied(admitted[admitted.length - 1]);
    expect(await b.admit(request(T0 + 201, 60))).toBeNull();
    await a.drain();
    await b.drain();
    expect(b.credit(claim.key)).toEqual({ spendable: 60, reserved: 60 });
  });
});
