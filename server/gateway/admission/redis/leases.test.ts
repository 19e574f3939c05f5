import { describe, expect, it } from 'vitest';
import { FakeBases, T0 } from '../store.contract';
import { counterKeys, type AdmissionRequest, type AdmissionVerdict, type CreditClaim, type RateClaim } from '../store';
import { RedisAdmissionStore } from './store';
import { redisTestLink } from '../test-fixture';
import { needs } from '../../../testing/requirements';

const { link, prefix, presence, stores, log } = redisTestLink('leases');

let ownerSerial = 700_000 + Math.floor(Math.random() * 90_000);

async function storeOf(loader: FakeBases): Promise<RedisAdmissionStore> {
  const store = new RedisAdmissionStore(link, loader, { refreshMs: 3_600_000, log, presence });
  stores.push(store);
  expect(await store.whenReady(5000)).toBe(true);
  return store;
}

function tenant(credit: number) {
  const ownerId = ++ownerSerial;
  const loader = new FakeBases();
  loader.credits.set(1, credit);
  const claim: CreditClaim = { key: counterKeys.credit(ownerId, 1), accountId: 1, floor: 0, lowAt: null };
  const rpm: RateClaim = { key: counterKeys.rate(ownerId, 1, 'rpm'), name: 'RPM', kind: 'requests', windowMs: 60_000, limit: 100_000 };
  const tpm: RateClaim = { key: counterKeys.rate(ownerId, 1, 'tpm'), name: 'TPM', kind: 'tokens', windowMs: 60_000, limit: 10_000_000 };
  const rates = [rpm, tpm];
  let serial = 0;
  const request = (now: number, amount = 1, tokens = 10): AdmissionRequest => ({
    id: `lease-test-${ownerId}-${++serial}`, ownerId, credit: claim, spend: [], rates, amount, tokens, now, expiresAt: now + 600_000,
  });
  return { ownerId, loader, claim, rpm, tpm, request };
}

/** Admits one request a millisecond (a busy account: 1,000 a second) and says how many were admitted without a round trip. */
async function busy(store: RedisAdmissionStore, make: (now: number) => AdmissionRequest, count: number, from: number) {
  const admitted: AdmissionRequest[] = [];
  let local = 0;
  for (let i = 0; i < count; i++) {
    const r = make(from + i);
    const v = store.admit(r);
    if (!(v instanceof Promise)) local++;
    const verdict: AdmissionVerdict = await v;
    if (verdict === null) admitted.push(r);
    // Lets a lease asked for in the background arrive, as requests would.
    if (i % 10 === 9) await new Promise((res) => setImmediate(res));
  }
  return { admitted, local };
}

describe('RedisAdmissionStore leases', needs('redis'), () => {
  it('a busy account is admitted without a round trip, and the shared counters end exact', async () => {
    const t = tenant(10_000);
    const store = await storeOf(t.loader);
    const { admitted, local } = await busy(store, (now) => t.request(now, 2, 10), 400, T0);
    expect(admitted).toHaveLength(400);
    expect(local).toBeGreaterThan(200);
    // Each settles at its own cost; one in ten is released (nothing billable).
    let cost = 0;
    let tokens = 0;
    admitted.forEach((r, i) => {
      if (i % 10 === 0) return store.release(r, T0 + 400);
      store.settle(r, { cost: 1.25, tokens: 7 }, T0 + 400);
      cost += 1.25;
      tokens += 7;
    });
    await store.drain();
    expect(store.open).toBe(0);
    const credit = store.credit(t.claim.key)!;
    expect(credit.reserved).toBe(0);
    expect(credit.spendable).toBeCloseTo(10_000 - cost, 9);
    // Every request counts once on the request limit; tokens as used, what leases held given back.
    // No lease or reservation is left in Redis.
    const res = await link.client.hgetall(`${prefix}{o:${t.ownerId}}:res`);
    expect(Object.values(res).filter((v) => v !== 'X')).toEqual([]);
  });

  it('request limits hold under leases: no more than the GCRA allows request by request', async () => {
    const t = tenant(1_000_000);
    const rpm: RateClaim = { ...t.rpm, limit: 2000 };
    const rates = [rpm];
    const store = await storeOf(t.loader);
    const { admitted, local } = await busy(store, (now) => ({ ...t.request(now, 0, 0), rates }), 3000, T0);
    expect(local).toBeGreaterThan(0);
    // One a millisecond against 2,000 a minute: a burst of ~2,068, then one per 30 ms.
    expect(admitted.length).toBeLessThanOrEqual(2100);
    expect(admitted.length).toBeGreaterThan(1500);
    for (const r of admitted) store.settle(r, { cost: 0, tokens: 0 }, T0 + 3000);
    await store.drain();
    expect(store.rateUsed(rpm, T0 + 3000)).toBeLessThanOrEqual(2000);
  });

  it('two busy instances never admit more than the credit, and what leases held comes back', async () => {
    const t = tenant(300);
    const a = await storeOf(t.loader);
    const b = await storeOf(t.loader);
    const [fromA, fromB] = await Promise.all([
      busy(a, (now) => t.request(now), 400, T0),
      busy(b, (now) => t.request(now), 400, T0),
    ]);
    const served = fromA.admitted.length + fromB.admitted.length;
    expect(served).toBeLessThanOrEqual(300);
    expect(fromA.local + fromB.local).toBeGreaterThan(0);
    await a.drain();
    await b.drain();
    // Leases ended: exactly what is admitted stays reserved, and the rest can be admitted.
    expect(a.credit(t.claim.key)).toEqual({ spendable: 300, reserved: served });
    const rest: AdmissionVerdict[] = [];
    for (let i = 0; i < 300 - served; i++) rest.push(await b.admit(t.request(T0 + 500 + i)));
    expect(rest.every((v) => v === null)).toBe(true);
    expect(await b.admit(t.request(T0 + 900))).toMatchObject({ kind: 'credit' });
  });

  it('a lease Redis grants after the store began to drain goes back at once', async () => {
    const t = tenant(10_000);
    const store = await storeOf(t.loader);
    const { admitted } = await busy(store, (now) => t.request(now, 2, 10), 300, T0);
    const book = (store as unknown as { leases: { pending: Set<unknown> } }).leases;
    // The busy account's next requests ask for the next lease; the store drains before Redis answers.
    const more: AdmissionRequest[] = [];
    const verdicts: (AdmissionVerdict | Promise<AdmissionVerdict>)[] = [];
    for (let now = T0 + 300; book.pending.size === 0 && now < T0 + 1000; now++) {
      const r = t.request(now, 2, 10);
      more.push(r);
      verdicts.push(store.admit(r));
    }
    expect(book.pending.size).toBeGreaterThan(0);
    await store.drain();
    const answered = await Promise.all(verdicts);
    // Only the requests themselves stay reserved: no lease holds anything after the drain.
    const held = admitted.length + answered.filter((v) => v === null).length;
    expect(store.credit(t.claim.key)).toEqual({ spendable: 10_000, reserved: held * 2 });
    expect(book.pending.size).toBe(0);
  });

  it('an invalidation (a top-up, a take-back) ends the account\'s leases at once', async () => {
    const t = tenant(10_000);
    const store = await storeOf(t.loader);
    const { admitted, local } = await busy(store, (now) => t.request(now), 200, T0);
    expect(local).toBeGreaterThan(0);
    t.loader.credits.set(1, 50); // credit taken back
    store.invalidate(1);
    const next = store.admit(t.request(T0 + 201));
    expect(next).toBeInstanceOf(Promise);
    expect(await next).toMatchObject({ kind: 'credit' });
    await store.drain();
    expect(store.credit(t.claim.key)).toEqual({ spendable: 50, reserved: admitted.length });
  });

  it('a lease left by an instance that stopped is given back when it expires', async () => {
    const t = tenant(10_000);
    const gone = await storeOf(t.loader);
    await busy(gone, (now) => t.request(now, 1, 0), 200, T0);
    // The instance dies: its leases are never trimmed, its requests never settled.
    (gone as unknown as { leases: { forget(): void } }).leases.forget();
    const other = await storeOf(t.loader);
    const later = T0 + 11 * 60_000;
    expect(await other.admit(t.request(later, 1, 0))).toBeNull();
    await other.drain();
    expect(other.credit(t.claim.key)).toEqual({ spendable: 10_000, reserved: 1 });
  });
});
