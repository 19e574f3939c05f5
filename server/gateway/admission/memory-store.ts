import type { Logger } from '../../core/log';
import { errorFields } from '../../core/log';
import { gcraAdmit, gcraRetryAt, gcraUsed, emissionMs } from '../limits/gcra';
import {
  MONEY_EPSILON, moneyDust,
  type Actual, type AdmissionRequest, type AdmissionStore, type AdmissionVerdict, type BaseLoader, type CreditClaim, type RateClaim, type SpendClaim, type ThresholdSink,
} from './store';

/** A money counter (credit or spend); see store.ts for the arithmetic. */
interface Money {
  base: number;
  /** Everything settled into this counter in this process; only grows. */
  settled: number;
  /** `settled` when the base was read: value = base ∓ (settled − settledAtLoad). */
  settledAtLoad: number;
  reserved: number;
  hasBase: boolean;
  loadedAt: number;
  /** False after an invalidation: the next admission waits for a reload. */
  valid: boolean;
  /** Bumped by invalidation, so a load that raced with one does not count as valid. */
  generation: number;
  loading: Promise<void> | null;
  /** Credit: the grant epoch (low-balance period). */
  epoch: string;
  /** The period (epoch) a threshold was last reported for, so it is reported once per counter. */
  alerted: string;
  lastUsed: number;
}

export interface MemoryStoreOptions {
  /** A loaded base older than this is re-read in the background (BALANCE_REFRESH_MS). */
  refreshMs: number;
  onThreshold?: ThresholdSink;
  log?: Logger;
}

/** Below a nano-credit, money comparisons and leftovers are rounding. */
const SWEEP_EVERY_MS = 60_000;
/** An idle money counter without reservations is dropped after this; the next use reloads it. */
const IDLE_MS = 10 * 60_000;
const EXPIRE_EVERY_MS = 1000;

/** `now`: the store's latest clock reading, so a counter just created is not idle to the sweep. */
const newMoney = (now: number): Money => ({
  base: 0, settled: 0, settledAtLoad: 0, reserved: 0, hasBase: false, loadedAt: 0, valid: false, generation: 0, loading: null, epoch: '', alerted: '', lastUsed: now,
});

const tokenCost = (r: AdmissionRequest, claim: RateClaim) => (claim.kind === 'requests' ? 1 : Math.min(r.tokens, claim.limit));

/**
 * The in-process admission store (one instance's counters). Admission is synchronous once the
 * request's money counters are loaded; see store.ts for the contract.
 */
export class MemoryAdmissionStore implements AdmissionStore {
  private credits = new Map<string, Money>();
  private creditKeyOf = new Map<number, string>();
  private spends = new Map<string, Money>();
  private tats = new Map<string, number>();
  private reservations = new Map<string, AdmissionRequest>();
  /** Reservations released by expiry whose tokens are still reserved: a late settle settles them. */
  private expired = new WeakSet<AdmissionRequest>();
  private lastExpire = 0;
  private lastSweep = 0;

  constructor(private readonly loader: BaseLoader, private readonly opts: MemoryStoreOptions) {}

  drain(): Promise<void> {
    return Promise.resolve();
  }

  get open(): number {
    return this.reservations.size;
  }

  admit(r: AdmissionRequest): AdmissionVerdict | Promise<AdmissionVerdict> {
    const now = r.now;
    if (now - this.lastExpire >= EXPIRE_EVERY_MS) this.expire(now);
    if (now - this.lastSweep >= SWEEP_EVERY_MS) this.sweep(now);
    if (this.ready(r, now)) return this.admitLoaded(r);
    return this.loadThenAdmit(r);
  }

  /** True when every money counter of the request has a valid base; starts background refreshes of stale ones. */
  private ready(r: AdmissionRequest, now: number): boolean {
    let ready = true;
    if (r.credit) {
      const m = this.creditCounter(r.credit);
      if (!m.valid) ready = false;
      else if (now - m.loadedAt > this.opts.refreshMs) this.refresh(this.loadCredit(r.credit.accountId, m, now));
    }
    for (let i = 0; i < r.spend.length; i++) {
      const claim = r.spend[i];
      const m = this.spendCounter(claim.key);
      if (!m.valid) ready = false;
      else if (now - m.loadedAt > this.opts.refreshMs) this.refresh(this.loadSpend(claim, m, now));
    }
    return ready;
  }

  private refresh(p: Promise<void>): void {
    p.catch((err) => this.opts.log?.warn('admission_base_refresh_failed', errorFields(err)));
  }

  private async loadThenAdmit(r: AdmissionRequest): Promise<AdmissionVerdict> {
    // An invalidation during a load makes it count as stale: read again, a few times at most,
    // then go on with the freshest base there is (it was read after the change began).
    for (let attempt = 0; attempt < 3; attempt++) {
      const loads: Promise<void>[] = [];
      if (r.credit) {
        const m = this.creditCounter(r.credit);
        if (!m.valid) loads.push(this.loadCredit(r.credit.accountId, m, r.now));
      }
      for (const claim of r.spend) {
        const m = this.spendCounter(claim.key);
        if (!m.valid) loads.push(this.loadSpend(claim, m, r.now));
      }
      if (loads.length === 0) break;
      await Promise.all(loads);
    }
    return this.admitLoaded(r);
  }

  private creditCounter(claim: CreditClaim): Money {
    let m = this.credits.get(claim.key);
    if (!m) {
      this.credits.set(claim.key, (m = newMoney(this.lastExpire)));
      this.creditKeyOf.set(claim.accountId, claim.key);
    }
    return m;
  }

  private spendCounter(key: string): Money {
    let m = this.spends.get(key);
    if (!m) this.spends.set(key, (m = newMoney(this.lastExpire)));
    return m;
  }

  private loadCredit(accountId: number, m: Money, now: number): Promise<void> {
    if (m.loading) return m.loading;
    const generation = m.generation;
    const settledAtLoad = m.settled;
    m.loading = this.loader.credit(accountId).then(({ spendable, epoch }) => {
      this.loaded(m, spendable, settledAtLoad, generation, now);
      m.epoch = epoch;
    }).finally(() => { m.loading = null; });
    return m.loading;
  }

  private loadSpend(claim: SpendClaim, m: Money, now: number): Promise<void> {
    if (m.loading) return m.loading;
    const generation = m.generation;
    const settledAtLoad = m.settled;
    m.loading = this.loader.spend(claim).then((spent) => this.loaded(m, spent, settledAtLoad, generation, now))
      .finally(() => { m.loading = null; });
    return m.loading;
  }

  /** `now` is the admission time that asked for the load: the refresh interval runs on the callers' clock. */
  private loaded(m: Money, base: number, settledAtLoad: number, generation: number, now: number): void {
    m.base = base;
    m.settledAtLoad = settledAtLoad;
    m.loadedAt = now;
    m.hasBase = true;
    m.lastUsed = Math.max(m.lastUsed, now);
    if (generation === m.generation) m.valid = true;
  }

  private admitLoaded(r: AdmissionRequest): AdmissionVerdict {
    const now = r.now;
    const amount = r.amount > 0 ? r.amount : 0;
    const credit = r.credit;
    let cm: Money | undefined;
    if (credit) {
      cm = this.creditCounter(credit);
      const available = cm.base - (cm.settled - cm.settledAtLoad) - cm.reserved;
      if (available - amount < credit.floor - MONEY_EPSILON) return { kind: 'credit', claim: credit, available, amount };
    }
    const spend = r.spend;
    for (let i = 0; i < spend.length; i++) {
      const claim = spend[i];
      if (claim.cap === null) continue;
      const m = this.spendCounter(claim.key);
      const committed = m.base + (m.settled - m.settledAtLoad) + m.reserved;
      if (committed + amount > claim.cap + MONEY_EPSILON) return { kind: 'spend', claim, committed, amount };
    }
    const rates = r.rates;
    for (let i = 0; i < rates.length; i++) {
      const claim = rates[i];
      const tat = this.tats.get(claim.key) ?? 0;
      const cost = tokenCost(r, claim);
      if (Number.isNaN(gcraAdmit(tat, now, cost, claim.windowMs, claim.limit))) {
        return {
          kind: 'rate',
          claim,
          used: gcraUsed(tat, now, claim.windowMs, claim.limit),
          retryAt: gcraRetryAt(tat, now, cost, claim.windowMs, claim.limit),
          resetAt: Math.max(tat, now),
        };
      }
    }
    if (this.reservations.has(r.id)) throw new Error(`reservation ${r.id} is already open`);
    // Everything fits: reserve it all.
    if (cm) {
      cm.reserved += amount;
      cm.lastUsed = now;
    }
    for (let i = 0; i < spend.length; i++) {
      const m = this.spendCounter(spend[i].key);
      m.reserved += amount;
      m.lastUsed = now;
    }
    for (let i = 0; i < rates.length; i++) {
      const claim = rates[i];
      this.tats.set(claim.key, gcraAdmit(this.tats.get(claim.key) ?? 0, now, tokenCost(r, claim), claim.windowMs, claim.limit));
    }
    this.reservations.set(r.id, r);
    return null;
  }

  settle(r: AdmissionRequest, actual: Actual, now: number): void {
    const open = this.reservations.get(r.id) === r;
    const expired = !open && this.expired.has(r);
    if (!open && !expired) return;
    if (open) {
      this.reservations.delete(r.id);
      this.unreserveMoney(r);
    } else this.expired.delete(r);
    const cost = actual.cost > 0 && Number.isFinite(actual.cost) ? actual.cost : 0;
    const credit = r.credit;
    if (credit) {
      // A counter dropped meanwhile is not recreated: its next load reads the recorded usage.
      const m = this.credits.get(credit.key);
      if (m) {
        m.settled += cost;
        m.lastUsed = now;
        const spendable = m.base - (m.settled - m.settledAtLoad);
        if (credit.lowAt !== null && m.hasBase && spendable < credit.lowAt && m.alerted !== m.epoch) {
          m.alerted = m.epoch;
          this.opts.onThreshold?.({ kind: 'low_balance', accountId: credit.accountId, ownerId: r.ownerId, period: m.epoch, value: spendable, threshold: credit.lowAt });
        }
      }
    }
    for (let i = 0; i < r.spend.length; i++) {
      const claim = r.spend[i];
      const m = this.spends.get(claim.key);
      if (!m) continue;
      m.settled += cost;
      m.lastUsed = now;
      const spent = m.base + (m.settled - m.settledAtLoad);
      if (claim.alertAt !== null && m.hasBase && spent >= claim.alertAt - MONEY_EPSILON && m.alerted !== claim.period) {
        m.alerted = claim.period;
        this.opts.onThreshold?.({ kind: 'soft_limit', accountId: claim.accountId, ownerId: claim.ownerId, period: claim.period, value: spent, threshold: claim.alertAt });
      }
    }
    const tokens = actual.tokens > 0 && Number.isFinite(actual.tokens) ? actual.tokens : 0;
    this.adjustTokens(r, tokens, now);
  }

  release(r: AdmissionRequest, now: number): void {
    if (this.reservations.get(r.id) !== r) {
      this.expired.delete(r);
      return;
    }
    this.reservations.delete(r.id);
    this.unreserveMoney(r);
    this.adjustTokens(r, 0, now);
  }

  /** Moves each token claim from the reserved estimate to `tokens`. */
  private adjustTokens(r: AdmissionRequest, tokens: number, now: number): void {
    for (let i = 0; i < r.rates.length; i++) {
      const claim = r.rates[i];
      if (claim.kind !== 'tokens') continue;
      const diff = tokens - tokenCost(r, claim);
      if (diff === 0) continue;
      const tat = this.tats.get(claim.key);
      if (tat === undefined) {
        if (diff > 0) this.tats.set(claim.key, now + diff * emissionMs(claim.windowMs, claim.limit));
        continue;
      }
      this.tats.set(claim.key, Math.max(tat, diff > 0 ? now : -Infinity) + diff * emissionMs(claim.windowMs, claim.limit));
    }
  }

  private unreserveMoney(r: AdmissionRequest): void {
    const amount = r.amount > 0 ? r.amount : 0;
    if (amount === 0) return;
    if (r.credit) {
      const m = this.credits.get(r.credit.key);
      if (m) m.reserved = moneyDust(m.reserved - amount);
    }
    for (let i = 0; i < r.spend.length; i++) {
      const m = this.spends.get(r.spend[i].key);
      if (m) m.reserved = moneyDust(m.reserved - amount);
    }
  }

  invalidate(accountId: number | null): void {
    if (accountId === null) {
      for (const m of this.credits.values()) invalidate(m);
      return;
    }
    const key = this.creditKeyOf.get(accountId);
    const m = key === undefined ? undefined : this.credits.get(key);
    if (m) invalidate(m);
  }

  expire(now: number): void {
    this.lastExpire = now;
    for (const r of this.reservations.values()) {
      if (r.expiresAt > now) continue;
      this.reservations.delete(r.id);
      this.unreserveMoney(r);
      this.expired.add(r);
      this.opts.log?.warn('reservation_expired', { request_id: r.id, owner: r.ownerId, amount: r.amount, tokens: r.tokens });
    }
  }

  /** Drops counters nobody used for a while, so idle accounts do not hold memory forever. */
  private sweep(now: number): void {
    this.lastSweep = now;
    for (const [key, tat] of this.tats) if (tat <= now) this.tats.delete(key);
    for (const [key, m] of this.spends) if (idle(m, now)) this.spends.delete(key);
    for (const [key, m] of this.credits) {
      if (!idle(m, now)) continue;
      this.credits.delete(key);
      const id = Number(key.slice(key.lastIndexOf(':') + 1));
      if (this.creditKeyOf.get(id) === key) this.creditKeyOf.delete(id);
    }
  }

  credit(key: string): { spendable: number; reserved: number } | undefined {
    const m = this.credits.get(key);
    return m && m.hasBase ? { spendable: m.base - (m.settled - m.settledAtLoad), reserved: m.reserved } : undefined;
  }

  spend(key: string): { spent: number; reserved: number } | undefined {
    const m = this.spends.get(key);
    return m && m.hasBase ? { spent: m.base + (m.settled - m.settledAtLoad), reserved: m.reserved } : undefined;
  }

  rateUsed(claim: RateClaim, now: number): number {
    return gcraUsed(this.tats.get(claim.key) ?? 0, now, claim.windowMs, claim.limit);
  }
}

function invalidate(m: Money): void {
  m.generation++;
  m.valid = false;
}

const idle = (m: Money, now: number) => m.reserved === 0 && m.loading === null && now - m.lastUsed > IDLE_MS;
