/**
 * The admission store: every counter one proxied request is checked against — spendable
 * credit, spend caps (DailyLimit, HardLimit) and rate/token limits (RPM…TPD, per-model
 * rpm/tpm) — checked and reserved AT ONCE, settled to the actual cost and tokens at the end.
 *
 * One interface, two implementations: `MemoryAdmissionStore` (this instance only) and a
 * shared one on Redis, where `admit` is ONE Lua script (EVALSHA) over the request's keys, or, for
 * a busy account, a share of a lease that one such script reserved for many (redis/leases.ts).
 * Every rule below is written so such a script can follow it literally; the contract suite
 * (`store.contract.ts`, `describeAdmissionStore`) is the executable form of this text and
 * every implementation must pass it.
 *
 * ## Counters and keys
 *
 * Every counter key starts with the tenant's hash tag `{o:<ownerId>}` (`counterKeys` below):
 * all the keys of one request belong to one tenant (the caller and its ancestors within it),
 * so they land in one Redis Cluster slot and one script may touch them all. Redis
 * implementations put their own prefix (REDIS_PREFIX) in front; the rest of the key is fixed.
 *
 * - **credit** `{o:O}:cr:<account>` — a charged account's money. State: `base` (spendable
 *   credit as loaded: cards − overdraft − usage recorded but not yet deducted), `settled`
 *   (actual cost settled since the load), `reserved` (sum of open reservations).
 *   spendable = base − settled; available = spendable − reserved.
 * - **spend** `{o:O}:sp:<account>:d<YYYYMMDD>` (UTC day) and `…:m<YYYYMM>` (calendar month,
 *   UTC) — what the account's SUBTREE within the tenant spent in the period (charged usage
 *   only: Root's and Owners' own calls are not charged and not counted). State: `base` (the
 *   database's sum as loaded), `settled` (since the load), `reserved`.
 *   spent = base + settled; committed = spent + reserved.
 * - **rate** `{o:O}:rl:<account>:<rpm|rph|rpd|tpm|tph|tpd>` and
 *   `{o:O}:rl:<account>:m:<model>:<rpm|tpm>` — GCRA: one number, the theoretical arrival time
 *   `tat` (ms). Emission interval T = windowMs / limit; a cost of n is admitted when
 *   max(tat, now) + n·T − now ≤ windowMs, and then tat := max(tat, now) + n·T. Requests cost 1;
 *   token limits cost the request's estimated tokens, capped at the limit (a request larger
 *   than the whole budget needs the whole budget free, else it could never pass). A missing
 *   rate counter is tat = 0: nothing to load. Rolling, not clock-aligned: no doubling across a
 *   minute boundary; RPD/TPD are rolling 24 hours.
 *
 * ## admit
 *
 * All-or-nothing: either every claim of the request has room and ALL are reserved, or nothing
 * is changed and the FIRST refusal in this order is returned:
 *   1. credit (`insufficient_balance`): available − amount < floor (UserMinBalance);
 *   2. spend claims in the order given (the caller's day, the caller's month, then each
 *      ancestor's, nearest first): a claim with a cap refuses when committed + amount > cap
 *      (`daily_limit_reached` / `hard_limit_reached` as the claim says); a claim without a cap
 *      (SoftLimit only) is reserved and never refuses;
 *   3. rate claims in the order given (the account's RPM, RPH, RPD, TPM, TPH, TPD, then the
 *      model's rpm, tpm).
 * The request object itself is the reservation handle: the caller keeps it and passes it to
 * `settle` or `release`. `id` (the request ID) names the reservation, unique per open
 * reservation. An amount of 0 reserves nothing on money counters but is still checked
 * (available ≥ floor): an account below its minimum is refused even for a free model.
 *
 * ## Loading base values
 *
 * Money counters have a base that lives in the database; the store receives a `BaseLoader`
 * port and calls it for a counter that is MISSING (never loaded), INVALIDATED (the account
 * changed: a grant, a take-back, a Rates change) or, in the background, STALE (older than the
 * refresh interval, to follow card expiry and other instances). `admit` is synchronous when
 * every money counter of the request is loaded and valid; otherwise it returns a promise that
 * loads the missing bases (concurrent admissions share one load per counter) and then admits
 * as above. A load snapshots `settled` when it starts and keeps only what is settled after:
 * the loader's value includes everything recorded before it was called (it reads this
 * instance's not-yet-written usage synchronously, before its first await), so an amount
 * written while loading is never missed; the database loader reads again once a batch that
 * may have committed under it is done (bases.ts), so it is not counted twice either. A stale
 * counter still answers from its old base while it reloads. A Redis store loads a missing key
 * with the same port and sets it only if still absent (SET NX semantics), so concurrent
 * instances agree on one base.
 *
 * ## settle, release, expiry
 *
 * - `settle(r, actual)`: closes the reservation and applies the actual cost and tokens:
 *   credit reserved −= amount, settled += cost; each spend claim reserved −= amount,
 *   settled += cost (the counters of the admission's period, even when the request ends in the
 *   next one); each token claim tat += (tokens − reserved tokens)·T (the difference is given
 *   back or added); request claims keep their count. A cost beyond the reservation and the
 *   balance is applied in full (spendable may go negative: the ledger carries it as overdraft).
 *   Settling a reservation that already expired applies the actual cost (expiry already
 *   removed the money reserved) and settles its tokens as above.
 * - `release(r)`: the request delivered nothing billable (upstream failure, client gone before
 *   the answer, passed-through error): money reservations are removed and reserved tokens are
 *   given back; the request still counts against request limits (it used a slot).
 * - **expiry**: a reservation open past `r.expiresAt` (UPSTREAM_TIMEOUT_MS + grace after
 *   admission) is released as above, except that rate counters keep what was reserved (their
 *   windows have drained it by then). Settling an expired reservation is described above;
 *   releasing one does nothing. A settled or released reservation is closed: settling or
 *   releasing it again does nothing.
 *
 * ## Time
 *
 * Implementations use the times they are given (`r.now`, the `now` of settle/release/expire),
 * never a clock of their own (not even Redis TIME): tests inject clocks, and instances are
 * expected to run NTP-synchronized clocks.
 *
 * ## Thresholds (alerts)
 *
 * After a settle, the store reports a crossing to its `ThresholdSink`: `low_balance` when a
 * credit claim's spendable is below `lowAt`, `soft_limit` when a spend claim's spent reached
 * `alertAt`. It may report the same crossing more than once (each instance, each settle); the
 * sink makes it once per period (the database's account_alerts key). The period is
 * `credit.epoch` (changes with every grant) for low balance, the spend claim's `period` for
 * SoftLimit.
 */

export type SpendPeriod = 'day' | 'month';

/** Money compared within this (floating-point sums of costs); the Lua's EPS is the same. */
export const MONEY_EPSILON = 1e-9;
/** A reserved total this close to zero is zero: what releases leave behind is rounding, not money. */
export const moneyDust = (x: number) => (Math.abs(x) < MONEY_EPSILON ? 0 : x);

/** Counter keys, tenant-tagged for Redis Cluster; see the header. */
export const counterKeys = {
  credit: (ownerId: number, accountId: number) => `{o:${ownerId}}:cr:${accountId}`,
  /** `period` is `d20261123` or `m202611` (see periodOf). */
  spend: (ownerId: number, accountId: number, period: string) => `{o:${ownerId}}:sp:${accountId}:${period}`,
  rate: (ownerId: number, accountId: number, field: string) => `{o:${ownerId}}:rl:${accountId}:${field}`,
  modelRate: (ownerId: number, accountId: number, model: string, field: 'rpm' | 'tpm') => `{o:${ownerId}}:rl:${accountId}:m:${model}:${field}`,
};

/** The credit of the calling account (charged accounts only: Root and Owners have none). */
export interface CreditClaim {
  key: string;
  accountId: number;
  /** Available credit must stay at or above this after the reservation (UserMinBalance). */
  floor: number;
  /** A settle leaving spendable below this reports `low_balance`; null: never. */
  lowAt: number | null;
}

/** One spend counter of the caller's or an ancestor's subtree, for one period. */
export interface SpendClaim {
  key: string;
  /** The account whose cap this is; its subtree's spend is counted. */
  accountId: number;
  ownerId: number;
  /** DNA path of that account: its subtree is every DNA with this prefix. */
  dna: string;
  kind: SpendPeriod;
  /** `d20261123` / `m202611`: part of the key and the alert's period. */
  period: string;
  /** [start, end) of the period, ms since epoch (UTC). */
  start: number;
  end: number;
  /** committed + amount > cap refuses; null: counted for the alert only. */
  cap: number | null;
  /** The error code of a refusal. */
  code: 'daily_limit_reached' | 'hard_limit_reached';
  /** Spent reaching this reports `soft_limit`; null: never. */
  alertAt: number | null;
}

/** One request or token limit (GCRA). */
export interface RateClaim {
  key: string;
  /** What the client is told: `RPM`, `TPD`, `gpt-4o rpm`, ... */
  name: string;
  kind: 'requests' | 'tokens';
  windowMs: number;
  limit: number;
}

/**
 * One admission: the claims of a request and what it reserves. The same object is the
 * reservation handle for settle/release. Claim arrays are built once per account profile and
 * shared by its requests; only this object is per request.
 */
export interface AdmissionRequest {
  /** Request ID: names the reservation (unique among open reservations). */
  id: string;
  ownerId: number;
  /** null for Root and Owners (exempt): no money is reserved. */
  credit: CreditClaim | null;
  spend: readonly SpendClaim[];
  rates: readonly RateClaim[];
  /** Credit to reserve: the request's maximum cost. */
  amount: number;
  /** Tokens to reserve on token limits: estimated input + maximum output. */
  tokens: number;
  /** Admission time (ms); settle/release take their own time. */
  now: number;
  /** When an unsettled reservation is released by the store. */
  expiresAt: number;
}

/**
 * Whether two requests share one claim set (given the same `rates` array): the same credit claim
 * and spend claims. Accounts without caps may pass a fresh empty spend list each time: those are one.
 */
export function sameClaimSet(a: Pick<AdmissionRequest, 'credit' | 'spend'>, b: Pick<AdmissionRequest, 'credit' | 'spend'>): boolean {
  return a.credit === b.credit && (a.spend === b.spend || (a.spend.length === 0 && b.spend.length === 0));
}

export type AdmissionRefusal =
  | { kind: 'credit'; claim: CreditClaim; /** available before this request */ available: number; amount: number }
  | { kind: 'spend'; claim: SpendClaim; /** spent + reserved before this request */ committed: number; amount: number }
  | {
    kind: 'rate';
    claim: RateClaim;
    /** Units in use (0…limit). */
    used: number;
    /** When this request would fit (ms). */
    retryAt: number;
    /** When the whole budget is free again (ms). */
    resetAt: number;
  }
  /** Shared state (Redis) is away and the request has money claims: refused, never guessed (503 shared_state_unavailable). */
  | { kind: 'unavailable'; /** When to try again (ms): Retry-After. */ retryAt: number };

export type AdmissionVerdict = AdmissionRefusal | null;

/** Actual usage of a settled request. */
export interface Actual {
  /** Actual cost in credit (what the usage record bills). */
  cost: number;
  /** Actual prompt + completion tokens. */
  tokens: number;
}

/** Base values from the database (see "Loading base values"). */
export interface BaseLoader {
  /**
   * Spendable credit of a charged account (cards − overdraft − this instance's usage recorded
   * but not yet deducted) and its epoch (changes with every grant: the low-balance period).
   */
  credit(accountId: number): Promise<{ spendable: number; epoch: string }>;
  /** Charged spend of the claim's subtree in [start, end), with this instance's unwritten usage. */
  spend(claim: SpendClaim): Promise<number>;
}

export interface ThresholdCrossing {
  kind: 'low_balance' | 'soft_limit';
  accountId: number;
  ownerId: number;
  /** Low balance: the credit epoch; SoftLimit: the spend claim's period. */
  period: string;
  value: number;
  threshold: number;
}

export type ThresholdSink = (c: ThresholdCrossing) => void;

/** What tests, headers and the console may read without reserving anything. */
export interface CounterView {
  /** Credit: spendable and reserved; undefined when not loaded. */
  credit(key: string): { spendable: number; reserved: number } | undefined;
  /** Spend: spent and reserved; undefined when not loaded. */
  spend(key: string): { spent: number; reserved: number } | undefined;
  /** Rate: units in use now (0 when unknown). */
  rateUsed(claim: RateClaim, now: number): number;
}

export interface AdmissionStore extends CounterView {
  /** Checks and reserves every claim at once; synchronous when every base is loaded. */
  admit(r: AdmissionRequest): AdmissionVerdict | Promise<AdmissionVerdict>;
  /** Replaces the reservation with the actual cost and tokens; never waits. */
  settle(r: AdmissionRequest, actual: Actual, now: number): void;
  /** Drops the reservation: nothing billable was delivered; never waits. */
  release(r: AdmissionRequest, now: number): void;
  /**
   * Once `r` is settled or released: resolves when that is applied where every instance sees it
   * (a shared store), or when it could not be and waits for replay. Undefined when there is
   * nothing to wait for; a store that applies them as they are made (one process) has none. The
   * call's answer ends after it: the client's next call, wherever it lands, finds what this
   * one held given back (issue #30).
   */
  applied?(r: AdmissionRequest): Promise<void> | undefined;
  /**
   * These charges (per account) are in the database now, by another way than this instance's
   * usage recorder: a shared store stops holding them as this instance's unwritten usage (the
   * recorder's own hook, redis/store.ts). A provider batch's reservation settles as a charge and
   * is then held by its gateway_batches row (gateway/batches/reserve.ts). Absent: nothing to do.
   */
  onWritten?(charges: ReadonlyMap<number, number>): void;
  /**
   * The account changed (credit granted or taken, Rates, deletion): its credit base is reloaded
   * before its next admission (open reservations stay); null: every account.
   */
  invalidate(accountId: number | null): void;
  /** Releases reservations past their expiry; implementations also do it on their own. */
  expire(now: number): void;
  /** Resolves once every settle and release issued so far is applied (tests, shutdown). */
  drain(): Promise<void>;
  /** Open reservations (for tests and shutdown). */
  readonly open: number;
}

const pad2 = (n: number) => (n < 10 ? `0${n}` : String(n));

/** The UTC day or calendar month containing `now`: its key and [start, end). */
export function periodOf(kind: SpendPeriod, now: number): { period: string; start: number; end: number } {
  const d = new Date(now);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth();
  if (kind === 'month') return { period: `m${y}${pad2(m + 1)}`, start: Date.UTC(y, m, 1), end: Date.UTC(y, m + 1, 1) };
  const day = d.getUTCDate();
  return { period: `d${y}${pad2(m + 1)}${pad2(day)}`, start: Date.UTC(y, m, day), end: Date.UTC(y, m, day + 1) };
}
