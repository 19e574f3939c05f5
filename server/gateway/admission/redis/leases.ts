import { sameClaimSet, type AdmissionRequest, type CounterView, type RateClaim } from '../store';

/**
 * Leases: a busy claim set's requests admitted by this instance without a round trip to Redis.
 *
 * A lease is one admission in Redis, like a request's, that reserves room for `units` requests
 * at once on every claim of an account profile: units × the request's amount on its credit and
 * spend counters, units × its tokens on token limits, `units` on request limits, counted as
 * arriving when the lease ends (LEASE_MS), the latest any of its requests can. Requests of the
 * same claim set are then admitted here against what the lease holds, synchronously. Each of
 * them is still settled or released in Redis by itself (as a part of the lease: its amount leaves
 * the lease's record and its actual cost and tokens apply at once), so the shared counters, the
 * unwritten usage and the alerts follow exactly as without leases. When the lease ends, what it
 * did not use goes back (a trim). Nothing is admitted that Redis did not reserve first: across
 * instances, money and limits hold as they do request by request.
 *
 * A lease is taken only where it cannot starve another instance: for a claim set this instance
 * serves at least BUSY_PER_SECOND requests a second, and only when every counter keeps room for
 * SHARE times as much per live instance; an account near its balance, cap or limit is admitted
 * request by request in Redis (admission/store.ts's exact rules), as is a request larger than what is left
 * in the lease. When the last request open under a claim set's leases ends and no lease would be
 * taken now (the account is no longer busy here, or nearer its balance, cap or limit than the
 * share rule allows), its leases end with it: what they hold is spendable on every instance as
 * soon as the last call ends (issue #30). An invalidation (a top-up, a take-back, a Rates change)
 * ends the account's leases at once; a Redis outage or restart ends all of them (store.ts).
 */

/** How long a lease admits (ms); its requests count against request limits as arriving then. */
export const LEASE_MS = 250;
/** Requests a second of one claim set on this instance before it takes leases for it. */
const BUSY_PER_SECOND = 200;
/** How often the arrival rate is measured (ms). */
const RATE_WINDOW_MS = 50;
/** A lease is worth taking for at least this many requests; at most this many at once. */
const MIN_UNITS = 8;
const MAX_UNITS = 512;
/** Room a counter must keep, as a multiple of a lease, for each live instance. */
const SHARE = 4;
/** After a lease could not be taken (no room, refused), the claim set waits this long (ms). */
const QUIET_MS = 1000;

export interface Lease {
  /** The lease's own admission in Redis (its ID names the lease). */
  readonly req: AdmissionRequest;
  units: number;
  freeAmount: number;
  freeTokens: number;
  freeUnits: number;
  readonly endsAt: number;
  /** Latest time (the requests' clock) seen while it was in use: a trim's `now`. */
  lastNow: number;
  ended: boolean;
  timer?: NodeJS.Timeout;
}

/** The leases of one claim set (an account profile's credit, spend and rate claims). */
interface Slot {
  req: AdmissionRequest;
  lease: Lease | null;
  acquiring: boolean;
  quietUntil: number;
  since: number;
  arrivals: number;
  /** Arrivals a millisecond, as last measured. */
  rate: number;
  hasTokens: boolean;
  /** Requests open under any of its leases. */
  open: number;
  /** The lease being asked for, if any. */
  asked: Acquisition | null;
}

export interface LeaseHooks {
  /** Admits the lease in Redis (units of each request limit, `lag` ms ahead); true when granted. */
  acquire(req: AdmissionRequest, units: number, lag: number): Promise<boolean>;
  /** Gives back what an ended lease did not use. */
  trim(lease: Lease, now: number): void;
  /** Live instances sharing the counters. */
  live(): number;
  /** This instance's ID, part of each lease's ID. */
  self(): string;
}

/** A lease asked of Redis and not yet answered. */
interface Acquisition {
  accountId: number | undefined;
  /** Ended before it was granted (an invalidation, a drain): granted, it goes back at once. */
  cancelled: boolean;
  answered: Promise<void>;
}

export class LeaseBook {
  private slots = new WeakMap<readonly RateClaim[], Slot[]>();
  private active = new Set<Lease>();
  private pending = new Set<Acquisition>();
  private leaseOf = new WeakMap<AdmissionRequest, Lease>();
  private slotOfLease = new WeakMap<Lease, Slot>();
  private seq = 0;

  constructor(private readonly views: CounterView, private readonly hooks: LeaseHooks) {}

  /** Admits `r` under its claim set's lease when it has room; otherwise null (Redis decides), maybe taking a lease for the next ones. */
  take(r: AdmissionRequest): Lease | null {
    const slot = this.slotOf(r);
    this.measure(slot, r.now);
    const l = slot.lease?.ended ? null : slot.lease;
    if (l && r.now >= l.endsAt) this.end(l, r.now);
    else if (l && this.fits(slot, l, r)) {
      if (r.amount > 0) l.freeAmount -= r.amount;
      l.freeTokens -= r.tokens;
      l.freeUnits--;
      if (r.now > l.lastNow) l.lastNow = r.now;
      this.leaseOf.set(r, l);
      slot.open++;
      // Half used or half gone: the next lease is asked for while this one still admits.
      if (l.freeUnits * 2 < l.units || (r.now - l.req.now) * 2 > LEASE_MS) this.acquire(slot, r);
      return l;
    }
    this.acquire(slot, r);
    return null;
  }

  /** The lease `r` was admitted under, until its settle or release (then `closed`). */
  of(r: AdmissionRequest): Lease | undefined {
    return this.leaseOf.get(r);
  }

  /**
   * `r` was settled or released at `now`. The last request open under its claim set's leases
   * ends them when no lease would be taken now (see the header), and the one being asked for.
   */
  closed(r: AdmissionRequest, now: number): void {
    const l = this.leaseOf.get(r);
    if (!l) return;
    this.leaseOf.delete(r);
    const slot = this.slotOfLease.get(l);
    if (!slot || --slot.open > 0 || this.unitsFor(slot, r) > 0) return;
    if (slot.asked) slot.asked.cancelled = true;
    if (slot.lease) this.end(slot.lease, now);
  }

  /** Ends the leases on this account's credit (null: every lease): an invalidation. Those still being asked for end as they are granted. */
  endFor(accountId: number | null, now: number): void {
    for (const l of [...this.active]) if (accountId === null || l.req.credit?.accountId === accountId) this.end(l, Math.max(now, l.lastNow));
    for (const a of this.pending) if (accountId === null || a.accountId === accountId) a.cancelled = true;
  }

  /** Settles once every lease asked for so far is answered (and, if ended meanwhile, given back). */
  answered(): Promise<void> {
    return Promise.allSettled([...this.pending].map((a) => a.answered)).then(() => undefined);
  }

  /** Forgets every lease without a trim: Redis lost them (a restart). */
  forget(): void {
    for (const l of this.active) {
      l.ended = true;
      clearTimeout(l.timer);
    }
    this.active.clear();
  }

  get count(): number {
    return this.active.size;
  }

  private end(l: Lease, now: number): void {
    if (l.ended) return;
    l.ended = true;
    clearTimeout(l.timer);
    this.active.delete(l);
    this.hooks.trim(l, Math.max(now, l.lastNow));
  }

  private fits(slot: Slot, l: Lease, r: AdmissionRequest): boolean {
    return l.freeUnits >= 1 && (r.amount <= 0 || r.amount <= l.freeAmount) && (!slot.hasTokens || r.tokens <= l.freeTokens);
  }

  private slotOf(r: AdmissionRequest): Slot {
    let list = this.slots.get(r.rates);
    if (!list) this.slots.set(r.rates, (list = []));
    for (const s of list) if (sameClaimSet(s.req, r)) return s;
    const slot: Slot = {
      req: r, lease: null, acquiring: false, quietUntil: -Infinity, since: r.now, arrivals: 0, rate: 0,
      hasTokens: r.rates.some((c) => c.kind === 'tokens'), open: 0, asked: null,
    };
    // Spend claims are rebuilt each day: older slots go.
    if (list.length >= 4) list.shift();
    list.push(slot);
    return slot;
  }

  private measure(slot: Slot, now: number): void {
    slot.arrivals++;
    const elapsed = now - slot.since;
    if (elapsed >= RATE_WINDOW_MS) {
      slot.rate = slot.arrivals / elapsed;
      slot.arrivals = 0;
      slot.since = now;
    } else if (elapsed < 0) {
      slot.since = now;
    }
  }

  /** Units a new lease for `r`'s claim set may take now: 0 when it should not take one. */
  private unitsFor(slot: Slot, r: AdmissionRequest): number {
    if (slot.rate * 1000 < BUSY_PER_SECOND) return 0;
    let units = Math.min(MAX_UNITS, Math.ceil(slot.rate * LEASE_MS * 1.5));
    const share = SHARE * Math.max(1, this.hooks.live());
    const room = (free: number, per: number) => {
      if (per > 0) units = Math.min(units, Math.floor(free / share / per));
    };
    if (r.credit) {
      const v = this.views.credit(r.credit.key);
      if (!v) return 0;
      room(v.spendable - v.reserved - r.credit.floor, r.amount);
    }
    for (const c of r.spend) {
      if (c.cap === null) continue;
      const v = this.views.spend(c.key);
      if (!v) return 0;
      room(c.cap - v.spent - v.reserved, r.amount);
    }
    for (const c of r.rates) room(c.limit - this.views.rateUsed(c, r.now), c.kind === 'tokens' ? r.tokens : 1);
    return units >= MIN_UNITS ? units : 0;
  }

  private acquire(slot: Slot, r: AdmissionRequest): void {
    if (slot.acquiring || r.now < slot.quietUntil) return;
    const units = this.unitsFor(slot, r);
    if (units === 0) {
      if (slot.rate * 1000 >= BUSY_PER_SECOND) slot.quietUntil = r.now + QUIET_MS;
      return;
    }
    const req: AdmissionRequest = {
      id: `lease:${this.hooks.self()}:${++this.seq}`, ownerId: r.ownerId, credit: r.credit, spend: r.spend, rates: r.rates,
      amount: r.amount > 0 ? r.amount * units : 0, tokens: r.tokens * units, now: r.now,
      // Its last request may run as long as any request: the record holds its part until then.
      expiresAt: r.now + LEASE_MS + (r.expiresAt - r.now),
    };
    slot.acquiring = true;
    const asked: Acquisition = { accountId: r.credit?.accountId, cancelled: false, answered: Promise.resolve() };
    this.pending.add(asked);
    slot.asked = asked;
    asked.answered = this.hooks.acquire(req, units, LEASE_MS).then((granted) => {
      slot.acquiring = false;
      if (slot.asked === asked) slot.asked = null;
      if (!granted) {
        slot.quietUntil = req.now + QUIET_MS;
        return;
      }
      const lease: Lease = {
        req, units, freeAmount: req.amount, freeTokens: req.tokens, freeUnits: units, endsAt: req.now + LEASE_MS, lastNow: req.now, ended: false,
      };
      // Ended while Redis was granting it: all of it goes back, nothing is admitted under it.
      if (asked.cancelled) {
        lease.ended = true;
        this.hooks.trim(lease, lease.lastNow);
        return;
      }
      lease.timer = setTimeout(() => this.end(lease, lease.endsAt), LEASE_MS);
      lease.timer.unref();
      this.active.add(lease);
      this.slotOfLease.set(lease, slot);
      const before = slot.lease;
      slot.lease = lease;
      if (before) this.end(before, lease.req.now);
    }, () => {
      slot.acquiring = false;
      if (slot.asked === asked) slot.asked = null;
      slot.quietUntil = req.now + QUIET_MS;
    }).finally(() => this.pending.delete(asked));
  }
}
