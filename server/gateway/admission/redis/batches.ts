import type { Logger } from '../../../core/log';
import { errorFields } from '../../../core/log';
import type { RedisLink } from '../../../adapters/redis/link';
import { Script } from '../../../adapters/redis/script';
import type { InstancePresence } from '../../../adapters/redis/presence';
import { BATCH } from './batch-script';
import type { SharedEpoch } from './epoch';
import type { CounterViews } from './views';
import { sameClaimSet } from '../store';
import type {
  Actual, AdmissionRefusal, AdmissionRequest, CreditClaim, RateClaim, SpendClaim, ThresholdSink,
} from '../store';

/**
 * A settle (mode 's') or release ('r') of one reservation, of one request admitted under a lease
 * ('l', 'q': `lease` names it), or the end of a lease ('t': `r` is the lease's own admission,
 * `actual` and `units` what it did not use); kept for replay when Redis cannot take it.
 */
export interface Closing {
  mode: 's' | 'r' | 'l' | 'q' | 't';
  r: AdmissionRequest;
  actual: Actual;
  now: number;
  lease?: string;
  /** 't': request units the lease did not use. */
  units?: number;
}

/** Thrown inside when Redis cannot answer; admission then follows the degraded mode. */
export class SharedStateAway extends Error {}

export function isConnectionError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  return /Connection is closed|Command timed out|ECONNREFUSED|ECONNRESET|Stream isn't writeable|enableOfflineQueue|MaxRetriesPerRequest|max retries per request/i.test(err.message);
}

export interface BatchOptions {
  /** A loaded base older than this is re-read in the background (BALANCE_REFRESH_MS); the script is told. */
  refreshMs: number;
  onThreshold?: ThresholdSink;
  log: Logger;
  /** This instance's ID names its unwritten usage on the counters. */
  presence: InstancePresence;
}

export interface BatchHooks {
  /** A batch sent and not answered yet: `drain` waits for it. */
  track<T>(p: Promise<T>): Promise<T>;
  /** A settle or release Redis could not take, to replay when it is back. */
  defer(c: Closing): void;
}

const batchScript = new Script(BATCH);

/** A lease part's settle or release waits at most this long for others (or an admission) to travel with (ms). */
const SETTLE_DELAY_MS = 5;
/** A tenant's batch is sent at once when it holds this many operations (one script must stay short). */
const MAX_BATCH_OPS = 128;
/** How often an instance sweeps a tenant's due reservations and refreshes a counter's TTL (ms). */
const HOUSEKEEPING_MS = 1000;

const numArg = (x: number) => String(x);

/**
 * What every request of one claim set (an account profile's credit, spend and rate claims, shared
 * by its requests) sends the same: full key names for this epoch and the claims' fixed arguments,
 * built once instead of per request.
 */
interface Plan {
  epoch: number;
  credit: CreditClaim | null;
  spend: readonly SpendClaim[];
  /** Its keys ([credit], spend…, rate…), full names. */
  keys: string[];
  /** The claims as the script reads them (batch-script.ts, PLANS). */
  text: string;
  /** Last time (the request's clock) this instance refreshed the money keys' TTLs. */
  admitTouched: number;
  settleTouched: number;
}

/** An operation waiting in a tenant's batch. */
type Op =
  | { kind: 'a'; r: AdmissionRequest; resolve: (answer: string[]) => void; reject: (err: unknown) => void }
  | { kind: 's'; c: Closing; done?: () => void; sum?: PartSum };

/**
 * The settles (or the releases) of one lease's requests in one batch, sent as one operation: the
 * script adds their costs, tokens and parts exactly as it would one after another.
 */
interface PartSum {
  /** Where the operation's arguments start in the batch's `args`. */
  at: number;
  now: number;
  cost: number;
  tokens: number;
  held: number;
  part: number;
  /** The closings after the first, for replay if the batch cannot be written. */
  more: { c: Closing; done?: () => void }[];
}

interface Batch {
  ownerId: number;
  /** res, rx, then each plan's keys, once. */
  keys: string[];
  /** ARGV: count, sweep time, refreshMs, self, number of plans (filled in when sent); then `plans`, `ids`, `args`. */
  head: string[];
  /** Each plan of the batch once: its number (as sent) … */
  planNo: Map<Plan, string>;
  /** … and its first key's index in KEYS and its text. */
  plans: string[];
  /** The operations' reservation IDs, in order. */
  ids: string[];
  args: string[];
  ops: Op[];
  /** Lease parts summed per lease ID: settles ('l') and releases ('q'). */
  settles: Map<string, PartSum>;
  releases: Map<string, PartSum>;
  /** Latest time among the operations: a sweep uses it. */
  now: number;
}

/**
 * The admissions, settles and releases each tenant makes in one turn of the event loop, sent to
 * Redis as one batch (one BATCH script: one round trip for the admission, never more), applied
 * in the order they were made. An admission's answer comes back raw (see `refusalOf`); a
 * settle's threshold crossings are reported here, and every answer updates the views.
 */
export class TenantBatches {
  private plans = new WeakMap<readonly RateClaim[], Plan[]>();
  /** Each account's credit key, from its plans: what an invalidation reloads here. */
  private creditKeyOf = new Map<number, string>();
  private batches = new Map<number, Batch>();
  private immediate: NodeJS.Immediate | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** A flush queued as a microtask: the closings of this task go before the instance does anything else. */
  private closing = false;
  private readonly flushAll = () => this.flush();
  private readonly flushClosings = () => {
    this.closing = false;
    this.flush();
  };
  private readonly refreshArg: string;
  /** When this instance last swept each tenant's reservations (by full `res` key, so per epoch). */
  private sweptAt = new Map<string, number>();

  constructor(
    private readonly link: RedisLink,
    private readonly epoch: SharedEpoch,
    private readonly views: CounterViews,
    private readonly opts: BatchOptions,
    private readonly hooks: BatchHooks,
  ) {
    this.refreshArg = numArg(opts.refreshMs);
  }

  /** The credit keys of the accounts served here: one account's, or every one (null). */
  creditKeys(accountId: number | null): string[] {
    return accountId === null ? [...this.creditKeyOf.values()] : [this.creditKeyOf.get(accountId)].filter((k): k is string => k !== undefined);
  }

  /**
   * Queues one admission; its answer is the script's fields (see `refusalOf`). A lease takes
   * `units` of each request limit, counted `lag` ms from now (operations.ts, ADMIT_ONE).
   */
  enqueueAdmit(r: AdmissionRequest, units = 1, lag = 0): Promise<string[]> {
    if (!this.link.up) return Promise.reject(new SharedStateAway());
    const plan = this.planOf(r);
    const b = this.batchOf(r.ownerId);
    const touch = plan.credit !== null && Math.abs(r.now - plan.admitTouched) >= HOUSEKEEPING_MS;
    if (touch) plan.admitTouched = r.now;
    b.ids.push(r.id);
    b.args.push('a', this.planIn(b, plan), numArg(r.now), numArg(r.expiresAt), r.amount > 0 ? numArg(r.amount) : '0', touch ? '1' : '0', numArg(r.tokens), numArg(units), numArg(lag));
    if (r.now > b.now) b.now = r.now;
    const answer = new Promise<string[]>((resolve, reject) => b.ops.push({ kind: 'a', r, resolve, reject }));
    this.scheduled(b, 'turn');
    return answer;
  }

  /**
   * Queues one settle or release for Redis (see `scheduled` for when it goes: `soon`, or after a
   * little while); a settle that cannot be written is kept for replay.
   */
  enqueueSettle(c: Closing, done?: () => void, soon = c.mode !== 'l' && c.mode !== 'q'): void {
    const { r, now } = c;
    const plan = this.planOf(r);
    const b = this.batchOf(r.ownerId);
    const cost = c.actual.cost > 0 && Number.isFinite(c.actual.cost) ? c.actual.cost : 0;
    const tokens = c.actual.tokens > 0 && Number.isFinite(c.actual.tokens) ? c.actual.tokens : 0;
    const touch = (c.mode === 's' || c.mode === 'l') && cost > 0 && Math.abs(now - plan.settleTouched) >= HOUSEKEEPING_MS;
    if (touch) plan.settleTouched = now;
    if (now > b.now) b.now = now;
    const held = c.mode === 't' ? c.units ?? 0 : r.tokens;
    const part = r.amount > 0 ? r.amount : 0;
    if (c.lease !== undefined && (c.mode === 'l' || c.mode === 'q')) {
      const sums = c.mode === 'l' ? b.settles : b.releases;
      const sum = sums.get(c.lease);
      if (sum) {
        sum.cost += cost;
        sum.tokens += tokens;
        sum.held += held;
        sum.part += part;
        if (now > sum.now) sum.now = now;
        if (touch) b.args[sum.at + 6] = '1';
        sum.more.push({ c, done });
        return;
      }
      const first: PartSum = { at: b.args.length, now, cost, tokens, held, part, more: [] };
      sums.set(c.lease, first);
      b.ids.push(c.lease);
      b.args.push(c.mode, this.planIn(b, plan), '', '', '', '', touch ? '1' : '0', '', '');
      b.ops.push({ kind: 's', c, done, sum: first });
    } else {
      b.ids.push(c.lease ?? r.id);
      b.args.push(c.mode, this.planIn(b, plan), numArg(now), numArg(cost), numArg(tokens), numArg(held), touch ? '1' : '0', numArg(part), '');
      b.ops.push({ kind: 's', c, done });
    }
    this.scheduled(b, soon ? 'now' : 'later');
  }

  /** Sends every waiting batch now. */
  flush(): void {
    if (this.immediate) clearImmediate(this.immediate);
    if (this.timer) clearTimeout(this.timer);
    this.immediate = undefined;
    this.timer = undefined;
    if (this.batches.size === 0) return;
    const batches = [...this.batches.values()];
    this.batches.clear();
    for (const b of batches) this.send(b);
  }

  /** The claim set's keys and fixed arguments for this epoch, built on its first request. */
  private planOf(r: AdmissionRequest): Plan {
    let list = this.plans.get(r.rates);
    if (list) {
      for (const p of list) if (sameClaimSet(p, r) && p.epoch === this.epoch.current) return p;
    } else {
      this.plans.set(r.rates, (list = []));
    }
    const { credit, spend, rates } = r;
    const opt = (x: number | null) => (x === null ? '-' : numArg(x));
    const keys: string[] = [];
    const text = [credit ? '1' : '0', numArg(spend.length), numArg(rates.length), credit ? numArg(credit.floor) : '-', credit ? opt(credit.lowAt) : '-'];
    if (credit) {
      keys.push(this.epoch.key(credit.key));
      this.views.follow(this.epoch.key(credit.key), 'c', credit.key);
      this.creditKeyOf.set(credit.accountId, credit.key);
    }
    for (const c of spend) {
      keys.push(this.epoch.key(c.key));
      this.views.follow(this.epoch.key(c.key), 's', c.key);
      text.push(opt(c.cap), opt(c.alertAt), c.period, numArg(c.end));
    }
    for (const c of rates) {
      keys.push(this.epoch.key(c.key));
      this.views.follow(this.epoch.key(c.key), 'r', c.key);
      text.push(numArg(c.windowMs), numArg(c.limit), c.kind === 'tokens' ? 't' : 'r');
    }
    const plan: Plan = { epoch: this.epoch.current, credit, spend, keys, text: text.join(' '), admitTouched: -Infinity, settleTouched: -Infinity };
    // Spend claims are rebuilt each day and a new epoch renames every key: older plans go.
    if (list.length >= 4) list.shift();
    list.push(plan);
    return plan;
  }

  private batchOf(ownerId: number): Batch {
    let b = this.batches.get(ownerId);
    if (!b) {
      this.batches.set(ownerId, (b = {
        ownerId, keys: this.epoch.tenantKeys(ownerId), head: ['', '', this.refreshArg, this.opts.presence.id, ''], planNo: new Map(), plans: [], ids: [], args: [], ops: [], settles: new Map(), releases: new Map(), now: -Infinity,
      }));
    }
    return b;
  }

  /** The plan's number in the batch; its keys and text join the batch on its first request. */
  private planIn(b: Batch, plan: Plan): string {
    let no = b.planNo.get(plan);
    if (no === undefined) {
      no = numArg(b.planNo.size + 1);
      b.planNo.set(plan, no);
      b.plans.push(numArg(b.keys.length + 1), plan.text);
      for (const key of plan.keys) b.keys.push(key);
    }
    return no;
  }

  /**
   * When a batch goes:
   * - `turn`, an admission: in this turn of the event loop (setImmediate: the requests read in
   *   the same turn share it).
   * - `now`, the settle or release of a reservation, or the end of a lease (a trim): before this
   *   task ends (a microtask), so before this instance reads anything more. The call's answer has
   *   just ended, and its client may call again at once through another instance: what the call
   *   held must be gone from Redis by the time that call is admitted, not a few milliseconds
   *   later (issue #30: near its floor, the account was refused for an ended call's hold).
   * - `later`, a part of a lease still under way: it waits a little for others and for an
   *   admission to travel with, so with leases most writes to Redis, which wake it on another
   *   core, carry many. The lease itself holds more than these parts until it ends, and a lease
   *   is only taken far from the floor (leases.ts); a part of a lease that ended goes `now`.
   */
  private scheduled(b: Batch, when: 'turn' | 'now' | 'later'): void {
    if (b.ops.length >= MAX_BATCH_OPS) {
      this.batches.delete(b.ownerId);
      this.send(b);
      return;
    }
    if (when === 'now') {
      if (!this.closing) {
        this.closing = true;
        queueMicrotask(this.flushClosings);
      }
    } else if (when === 'turn') {
      this.immediate ??= setImmediate(this.flushAll);
    } else if (!this.immediate && !this.timer) {
      this.timer = setTimeout(this.flushAll, SETTLE_DELAY_MS);
    }
  }

  private send(b: Batch): void {
    const [res] = b.keys;
    const last = this.sweptAt.get(res);
    const sweep = last === undefined || Math.abs(b.now - last) >= HOUSEKEEPING_MS;
    if (sweep) this.sweptAt.set(res, b.now);
    for (const sum of [...b.settles.values(), ...b.releases.values()]) {
      const a = b.args;
      a[sum.at + 2] = numArg(sum.now);
      a[sum.at + 3] = numArg(sum.cost);
      a[sum.at + 4] = numArg(sum.tokens);
      a[sum.at + 5] = numArg(sum.held);
      a[sum.at + 7] = numArg(sum.part);
    }
    b.head[0] = numArg(b.ops.length);
    b.head[1] = sweep ? numArg(b.now) : '';
    b.head[4] = numArg(b.planNo.size);
    this.hooks.track(batchScript.run(this.link.client, b.keys, [b.head, b.plans, b.ids, b.args]).then(
      (answers) => {
        // One string per operation, its fields separated by NUL (one bulk reply each is cheaper to read than arrays).
        const list = answers as string[];
        this.views.apply(list[b.ops.length]);
        for (let i = 0; i < b.ops.length; i++) {
          const op = b.ops[i];
          if (op.kind === 'a') op.resolve(list[i].split('\0'));
          else {
            this.settled(op.c, list[i].split('\0'));
            op.done?.();
            if (op.sum) for (const m of op.sum.more) m.done?.();
          }
        }
      },
      (err) => {
        for (const op of b.ops) {
          if (op.kind === 'a') op.reject(err);
          else {
            for (const { c, done } of [{ c: op.c, done: op.done }, ...op.sum?.more ?? []]) {
              if (isConnectionError(err) || !this.link.up) this.hooks.defer(c);
              else this.opts.log.error('admission_settle_failed', { request_id: c.r.id, ...errorFields(err) });
              done?.();
            }
          }
        }
      },
    ));
  }

  /** Reports the threshold crossings of a settle's answer ('ok' alone: none; 'closed': nothing was open). */
  private settled(c: Closing, a: string[]): void {
    if (a[0] !== 'ok' || a.length === 1) return;
    const { r } = c;
    let i = 1;
    if (r.credit) {
      if (a[i] !== '' && r.credit.lowAt !== null) {
        this.opts.onThreshold?.({ kind: 'low_balance', accountId: r.credit.accountId, ownerId: r.ownerId, period: a[i], value: Number(a[i + 1]), threshold: r.credit.lowAt });
      }
      i += 2;
    }
    for (const s of r.spend) {
      if (a[i] === '1' && s.alertAt !== null) {
        this.opts.onThreshold?.({ kind: 'soft_limit', accountId: s.accountId, ownerId: s.ownerId, period: s.period, value: Number(a[i + 1]), threshold: s.alertAt });
      }
      i += 2;
    }
  }
}

/** An admission's answer as a refusal; null when it was admitted (the fields after 'ok' name stale bases). */
export function refusalOf(r: AdmissionRequest, a: string[]): AdmissionRefusal | null {
  const amount = r.amount > 0 ? r.amount : 0;
  switch (a[0]) {
    case 'c':
      return { kind: 'credit', claim: r.credit!, available: Number(a[1]), amount };
    case 's':
      return { kind: 'spend', claim: r.spend[Number(a[1]) - 1], committed: Number(a[2]), amount };
    case 'r':
      return { kind: 'rate', claim: r.rates[Number(a[1]) - 1], used: Number(a[2]), retryAt: Number(a[3]), resetAt: Number(a[4]) };
  }
  return null;
}
