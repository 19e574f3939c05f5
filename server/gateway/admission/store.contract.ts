/**
 * The contract every AdmissionStore implementation passes (store.ts is its prose). Use it from
 * a test file:
 *
 *   describeAdmissionStore('memory', (env) => new MemoryAdmissionStore(env.loader, { refreshMs: env.refreshMs, onThreshold: env.onThreshold }));
 *
 * Each test uses Owner IDs of its own, so a shared store (Redis) needs no cleanup between
 * tests; `teardown` runs after the suite. Verdicts are always awaited: a shared store may
 * answer every admission with a promise.
 */
import { afterAll, describe, expect, it, type TestOptions } from 'vitest';
import {
  counterKeys, periodOf, type AdmissionRequest, type AdmissionStore, type BaseLoader, type CreditClaim, type RateClaim,
  type SpendClaim, type ThresholdCrossing,
} from './store';

/** Base values the test controls, standing in for the database. */
export class FakeBases implements BaseLoader {
  credits = new Map<number, number>();
  epochs = new Map<number, string>();
  /** Spend base by spend key. */
  spends = new Map<string, number>();
  creditLoads = 0;
  spendLoads = 0;
  /** While set, loads wait for it. */
  gate: Promise<void> | null = null;

  async credit(accountId: number): Promise<{ spendable: number; epoch: string }> {
    this.creditLoads++;
    const value = this.credits.get(accountId) ?? 0;
    const epoch = this.epochs.get(accountId) ?? '1';
    if (this.gate) await this.gate;
    return { spendable: value, epoch };
  }

  async spend(claim: SpendClaim): Promise<number> {
    this.spendLoads++;
    const value = this.spends.get(claim.key) ?? 0;
    if (this.gate) await this.gate;
    return value;
  }
}

export interface ContractEnv {
  loader: FakeBases;
  onThreshold: (c: ThresholdCrossing) => void;
  refreshMs: number;
}

export type MakeStore = (env: ContractEnv) => AdmissionStore | Promise<AdmissionStore>;

let ownerSerial = Math.floor(Math.random() * 1_000_000) * 100;

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
/**
 * The requests' time: noon (UTC) of the day the tests run. It must be today's: the Redis store
 * expires a period's counter a day after the period ends, by Redis' own clock. Noon keeps every
 * T0 ± 12 h of a test inside one UTC day and month, whatever the hour of the run.
 */
export const T0 = Math.floor(Date.now() / DAY) * DAY + DAY / 2;

interface Setup {
  store: AdmissionStore;
  loader: FakeBases;
  crossings: ThresholdCrossing[];
  ownerId: number;
  credit(accountId: number, floor?: number, lowAt?: number | null): CreditClaim;
  spend(accountId: number, kind: 'day' | 'month', cap: number | null, now?: number, alertAt?: number | null): SpendClaim;
  rate(accountId: number, field: 'rpm' | 'tpm' | 'rph', limit: number): RateClaim;
  request(fields: Partial<AdmissionRequest>): AdmissionRequest;
}

export function describeAdmissionStore(name: string, make: MakeStore, teardown?: () => Promise<void>, options: TestOptions = {}): void {
  let serial = 0;
  const setup = async (): Promise<Setup> => {
    const loader = new FakeBases();
    const crossings: ThresholdCrossing[] = [];
    const store = await make({ loader, onThreshold: (c) => crossings.push(c), refreshMs: 3_600_000 });
    const ownerId = ++ownerSerial;
    return {
      store, loader, crossings, ownerId,
      credit: (accountId, floor = 0, lowAt = null) => ({ key: counterKeys.credit(ownerId, accountId), accountId, floor, lowAt }),
      spend: (accountId, kind, cap, now = T0, alertAt = null) => {
        const p = periodOf(kind, now);
        return {
          key: counterKeys.spend(ownerId, accountId, p.period), accountId, ownerId, dna: `.${ownerId}.${accountId}.`, kind, ...p, cap,
          code: kind === 'day' ? 'daily_limit_reached' : 'hard_limit_reached', alertAt,
        };
      },
      rate: (accountId, field, limit) => ({
        key: counterKeys.rate(ownerId, accountId, field), name: field.toUpperCase(), kind: field === 'tpm' ? 'tokens' : 'requests',
        windowMs: field === 'rph' ? 60 * MINUTE : MINUTE, limit,
      }),
      request: (fields) => ({
        id: `${name}-${process.pid}-${++serial}`, ownerId, credit: null, spend: [], rates: [], amount: 0, tokens: 0,
        now: T0, expiresAt: T0 + 10 * MINUTE, ...fields,
      }),
    };
  };

  describe(`AdmissionStore contract: ${name}`, options, () => {
    if (teardown) afterAll(teardown);

    // fixed-date: periodOf is given its time; the last minutes of a day and of a year on purpose.
    it('keys carry the tenant hash tag', () => {
      expect(counterKeys.credit(7, 42)).toBe('{o:7}:cr:42');
      expect(counterKeys.spend(7, 42, 'd20261123')).toBe('{o:7}:sp:42:d20261123');
      expect(counterKeys.rate(7, 42, 'rpm')).toBe('{o:7}:rl:42:rpm');
      expect(counterKeys.modelRate(7, 42, 'gpt-4o', 'tpm')).toBe('{o:7}:rl:42:m:gpt-4o:tpm');
      expect(periodOf('day', Date.UTC(2026, 0, 5, 23, 59))).toEqual({ period: 'd20260105', start: Date.UTC(2026, 0, 5), end: Date.UTC(2026, 0, 6) });
      expect(periodOf('month', Date.UTC(2026, 11, 31, 23, 59))).toEqual({ period: 'm202612', start: Date.UTC(2026, 11, 1), end: Date.UTC(2027, 0, 1) });
    });

    it('reserves credit until the available credit would fall below the floor, loading the base once', async () => {
      const s = await setup();
      s.loader.credits.set(1, 10);
      const credit = s.credit(1, 2);
      const verdicts = await Promise.all(Array.from({ length: 6 }, () => s.store.admit(s.request({ credit, amount: 2 }))));
      expect(verdicts.filter((v) => v === null)).toHaveLength(4);
      const refused = verdicts.find((v) => v !== null)!;
      expect(refused).toMatchObject({ kind: 'credit', claim: { accountId: 1 }, available: 2, amount: 2 });
      expect(s.loader.creditLoads).toBe(1);
      expect(s.store.credit(credit.key)).toEqual({ spendable: 10, reserved: 8 });
      // A free request is still checked against the floor.
      expect(await s.store.admit(s.request({ credit, amount: 0 }))).toBeNull();
      expect(await s.store.admit(s.request({ credit: s.credit(1, 2.5), amount: 0 }))).toMatchObject({ kind: 'credit' });
    });

    it('settles to the actual cost, releases, and bills a cost beyond reservation and balance in full', async () => {
      const s = await setup();
      s.loader.credits.set(1, 5);
      const credit = s.credit(1, 0);
      const a = s.request({ credit, amount: 2 });
      const b = s.request({ credit, amount: 2 });
      expect(await s.store.admit(a)).toBeNull();
      expect(await s.store.admit(b)).toBeNull();
      s.store.settle(a, { cost: 0.5, tokens: 10 }, T0 + 1);
      s.store.release(b, T0 + 1);
      await s.store.drain();
      expect(s.store.credit(credit.key)).toEqual({ spendable: 4.5, reserved: 0 });
      // Closed reservations: a second settle or release changes nothing.
      s.store.settle(a, { cost: 0.5, tokens: 10 }, T0 + 2);
      s.store.release(b, T0 + 2);
      const c = s.request({ credit, amount: 4 });
      expect(await s.store.admit(c)).toBeNull();
      s.store.settle(c, { cost: 7, tokens: 10 }, T0 + 3);
      await s.store.drain();
      expect(s.store.credit(credit.key)!.spendable).toBeCloseTo(-2.5, 9);
      expect(s.store.open).toBe(0);
      expect(await s.store.admit(s.request({ credit, amount: 0 }))).toMatchObject({ kind: 'credit' });
    });

    it('is all-or-nothing: a refusal reserves nothing anywhere', async () => {
      const s = await setup();
      s.loader.credits.set(1, 100);
      const credit = s.credit(1, 0);
      const day = s.spend(1, 'day', 10);
      const rpm = s.rate(1, 'rpm', 1);
      expect(await s.store.admit(s.request({ credit, spend: [day], rates: [rpm], amount: 1 }))).toBeNull();
      const refused = await s.store.admit(s.request({ credit, spend: [day], rates: [rpm], amount: 1 }));
      expect(refused).toMatchObject({ kind: 'rate', claim: { name: 'RPM' } });
      expect(s.store.credit(credit.key)!.reserved).toBe(1);
      expect(s.store.spend(day.key)!.reserved).toBe(1);
    });

    it('orders refusals: credit, then spend claims in order, then rate claims in order', async () => {
      const s = await setup();
      s.loader.credits.set(1, 1);
      s.loader.spends.set(s.spend(1, 'day', 1).key, 5);
      s.loader.spends.set(s.spend(2, 'month', 1).key, 5);
      const rpm = s.rate(1, 'rpm', 1);
      expect(await s.store.admit(s.request({ rates: [rpm] }))).toBeNull();
      const all = { spend: [s.spend(1, 'day', 1), s.spend(2, 'month', 1)], rates: [s.rate(1, 'rph', 10), rpm], amount: 2 };
      expect(await s.store.admit(s.request({ credit: s.credit(1, 0), ...all }))).toMatchObject({ kind: 'credit' });
      expect(await s.store.admit(s.request(all))).toMatchObject({ kind: 'spend', claim: { accountId: 1, code: 'daily_limit_reached' }, committed: 5 });
      expect(await s.store.admit(s.request({ ...all, spend: [s.spend(1, 'day', 100), s.spend(2, 'month', 6)] })))
        .toMatchObject({ kind: 'spend', claim: { accountId: 2, code: 'hard_limit_reached' }, committed: 5, amount: 2 });
      expect(await s.store.admit(s.request({ ...all, spend: [] }))).toMatchObject({ kind: 'rate', claim: { name: 'RPM' } });
    });

    it('caps spend per period: spent + reserved + amount above the cap refuses; a claim without a cap never does', async () => {
      const s = await setup();
      const day = s.spend(1, 'day', 10);
      const ancestor = s.spend(9, 'month', null, T0, 12);
      s.loader.spends.set(day.key, 7);
      s.loader.spends.set(ancestor.key, 11);
      const r1 = s.request({ spend: [day, ancestor], amount: 2 });
      expect(await s.store.admit(r1)).toBeNull();
      expect(await s.store.admit(s.request({ spend: [day, ancestor], amount: 1.5 }))).toMatchObject({ kind: 'spend', committed: 9 });
      s.store.settle(r1, { cost: 3, tokens: 0 }, T0 + 1);
      await s.store.drain();
      expect(s.store.spend(day.key)).toEqual({ spent: 10, reserved: 0 });
      expect(s.store.spend(ancestor.key)).toEqual({ spent: 14, reserved: 0 });
      expect(await s.store.admit(s.request({ spend: [day], amount: 0 }))).toBeNull();
      expect(await s.store.admit(s.request({ spend: [day], amount: 0.001 }))).toMatchObject({ kind: 'spend' });
      // The next day is another counter.
      const tomorrow = s.spend(1, 'day', 10, T0 + DAY);
      expect(await s.store.admit(s.request({ spend: [tomorrow], amount: 5, now: T0 + DAY }))).toBeNull();
    });

    it('reports low balance and SoftLimit after a settle crosses them', async () => {
      const s = await setup();
      s.loader.credits.set(1, 10);
      s.loader.epochs.set(1, '77');
      const credit = s.credit(1, 0, 5);
      const month = s.spend(1, 'month', null, T0, 4);
      const a = s.request({ credit, spend: [month], amount: 3 });
      expect(await s.store.admit(a)).toBeNull();
      s.store.settle(a, { cost: 3, tokens: 0 }, T0 + 1);
      await s.store.drain();
      expect(s.crossings).toEqual([]);
      const b = s.request({ credit, spend: [month], amount: 3 });
      expect(await s.store.admit(b)).toBeNull();
      s.store.settle(b, { cost: 3, tokens: 0 }, T0 + 2);
      await s.store.drain();
      expect(s.crossings).toEqual(expect.arrayContaining([
        expect.objectContaining({ kind: 'low_balance', accountId: 1, ownerId: s.ownerId, period: '77', value: 4, threshold: 5 }),
        expect.objectContaining({ kind: 'soft_limit', accountId: 1, ownerId: s.ownerId, period: month.period, value: 6, threshold: 4 }),
      ]));
    });

    it('invalidation reloads the credit base before the next admission and keeps open reservations', async () => {
      const s = await setup();
      s.loader.credits.set(1, 3);
      const credit = s.credit(1, 0);
      const a = s.request({ credit, amount: 2 });
      expect(await s.store.admit(a)).toBeNull();
      expect(await s.store.admit(s.request({ credit, amount: 2 }))).toMatchObject({ kind: 'credit', available: 1 });
      s.loader.credits.set(1, 13); // a grant of 10
      s.store.invalidate(1);
      expect(await s.store.admit(s.request({ credit, amount: 2 }))).toBeNull();
      expect(s.loader.creditLoads).toBe(2);
      expect(s.store.credit(credit.key)).toEqual({ spendable: 13, reserved: 4 });
      s.store.release(a, T0 + 1);
      await s.store.drain();
      expect(s.store.credit(credit.key)!.reserved).toBe(2);
    });

    it('expires reservations never settled; a late settle still bills the actual cost', async () => {
      const s = await setup();
      s.loader.credits.set(1, 10);
      const credit = s.credit(1, 0);
      const a = s.request({ credit, amount: 6, expiresAt: T0 + MINUTE });
      expect(await s.store.admit(a)).toBeNull();
      expect(await s.store.admit(s.request({ credit, amount: 6, now: T0 + 1000 }))).toMatchObject({ kind: 'credit' });
      s.store.expire(T0 + MINUTE);
      expect(s.store.open).toBe(0);
      expect(s.store.credit(credit.key)).toEqual({ spendable: 10, reserved: 0 });
      s.store.settle(a, { cost: 1, tokens: 0 }, T0 + 2 * MINUTE);
      await s.store.drain();
      expect(s.store.credit(credit.key)).toEqual({ spendable: 9, reserved: 0 });
    });

    it('limits requests with GCRA: no doubling across a minute boundary', async () => {
      const s = await setup();
      const rpm = s.rate(1, 'rpm', 2);
      const end = T0 + 59_900; // 100 ms before a minute ends
      expect(await s.store.admit(s.request({ rates: [rpm], now: end }))).toBeNull();
      expect(await s.store.admit(s.request({ rates: [rpm], now: end + 1 }))).toBeNull();
      const refused = await s.store.admit(s.request({ rates: [rpm], now: end + 200 }));
      expect(refused).toMatchObject({ kind: 'rate', used: 2 });
      if (refused?.kind !== 'rate') throw new Error('expected a rate refusal');
      // One slot drains every 30 s: the next request fits 30 s after the first.
      expect(refused.retryAt).toBeCloseTo(end + 30_000, 0);
      expect(refused.resetAt).toBeCloseTo(end + 60_000, 0);
      expect(await s.store.admit(s.request({ rates: [rpm], now: end + 29_000 }))).toMatchObject({ kind: 'rate' });
      expect(await s.store.admit(s.request({ rates: [rpm], now: end + 30_000 }))).toBeNull();
      expect(await s.store.admit(s.request({ rates: [rpm], now: end + 30_001 }))).toMatchObject({ kind: 'rate' });
      // A request refused is not counted; a released one still is.
      const r = s.request({ rates: [rpm], now: end + 60_000 });
      expect(await s.store.admit(r)).toBeNull();
      s.store.release(r, end + 60_000);
      await s.store.drain();
      expect(s.store.rateUsed(rpm, end + 60_000)).toBe(2);
    });

    it('reserves tokens at admission and settles them to the real count', async () => {
      const s = await setup();
      const tpm = s.rate(1, 'tpm', 1000);
      const reqs = Array.from({ length: 20 }, () => s.request({ rates: [tpm], tokens: 100 }));
      const verdicts = await Promise.all(reqs.map((r) => s.store.admit(r)));
      expect(verdicts.filter((v) => v === null)).toHaveLength(10);
      expect(s.store.rateUsed(tpm, T0)).toBe(1000);
      const admitted = reqs.filter((_, i) => verdicts[i] === null);
      // Five used 40 tokens (60 given back each), four failed (all given back), one used 250.
      for (const r of admitted.slice(0, 5)) s.store.settle(r, { cost: 0, tokens: 40 }, T0);
      for (const r of admitted.slice(5, 9)) s.store.release(r, T0);
      s.store.settle(admitted[9], { cost: 0, tokens: 250 }, T0);
      await s.store.drain();
      expect(s.store.rateUsed(tpm, T0)).toBe(450);
      // A request larger than the whole budget needs the whole budget free.
      expect(await s.store.admit(s.request({ rates: [tpm], tokens: 5000 }))).toMatchObject({ kind: 'rate' });
      expect(await s.store.admit(s.request({ rates: [tpm], tokens: 5000, now: T0 + 27_000 }))).toBeNull();
    });
  });
}
