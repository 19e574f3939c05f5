import type { Redis } from 'ioredis';
import type { Logger } from '../../../core/log';
import { errorFields } from '../../../core/log';
import type { RedisLink } from '../../../adapters/redis/link';
import { Script } from '../../../adapters/redis/script';
import type { InstancePresence } from '../../../adapters/redis/presence';
import { INVALIDATE, LOAD, SWEEP } from './scripts';
import { isConnectionError, refusalOf, SharedStateAway, TenantBatches, type Closing } from './batches';
import { DegradedMode } from './degraded';
import { LeaseBook, type Lease } from './leases';
import { SharedEpoch } from './epoch';
import { UnwrittenUsage } from './unwritten';
import { CounterViews } from './views';
import { counterKeys } from '../store';
import type { Actual, AdmissionRequest, AdmissionStore, AdmissionVerdict, BaseLoader, RateClaim, ThresholdSink } from '../store';

export interface RedisStoreOptions {
  /** A loaded base older than this is re-read in the background (BALANCE_REFRESH_MS). */
  refreshMs: number;
  onThreshold?: ThresholdSink;
  log: Logger;
  /** Live instances: their IDs name unwritten usage, their count divides rate limits while Redis is away. */
  presence: InstancePresence;
  /** Retry-After of a refusal while shared state is away (ms). */
  retryAfterMs?: number;
}

const loadScript = new Script(LOAD);
const invalidateScript = new Script(INVALIDATE);
const sweepScript = new Script(SWEEP);

/**
 * The admission store shared by every instance on one Redis (REDIS_URL). An admission is one
 * operation of ONE Lua script (EVALSHA) that checks and reserves every claim of the request: the
 * admissions, settles and releases a tenant makes in one turn of the event loop go to Redis as
 * one batch (one round trip for the admission, never more), applied in the order they were made,
 * each counter read and written once per batch (batches.ts). The arithmetic is admission/store.ts's;
 * the Lua is in scripts.ts, batch-script.ts and operations.ts.
 *
 * Degraded mode while Redis is away (docs/decisions.md, degraded.ts): a request with money
 * claims is refused `unavailable` (503 shared_state_unavailable with Retry-After); a request
 * without money claims (Root, Owners) is admitted against this instance's own counters at
 * limit ÷ the instances alive before the outage. Settles and releases that could not be
 * written are replayed when Redis is back; the money counters they touched are then reloaded
 * from PostgreSQL, and this instance's unwritten usage is written again in full
 * (unwritten.ts). After a Redis restart (a new run_id) every key lives under a new epoch,
 * loaded from PostgreSQL (epoch.ts).
 */
export class RedisAdmissionStore implements AdmissionStore {
  private readonly epoch: SharedEpoch;
  private ready: Promise<void> | null = null;
  /** This instance's open reservations (expiry, `open`, shutdown). */
  private reservations = new Map<string, AdmissionRequest>();
  private expiredHere = new WeakSet<AdmissionRequest>();
  /** Settles and releases sent to Redis and not yet answered (see `applied`). */
  private closings = new WeakMap<AdmissionRequest, Promise<void>>();
  private loads = new Map<string, Promise<void>>();
  private inFlight = new Set<Promise<unknown>>();
  private readonly views: CounterViews;
  private readonly batches: TenantBatches;
  private readonly whileAway: DegradedMode;
  private readonly unwritten: UnwrittenUsage;
  private readonly leases: LeaseBook;
  private lastExpire = 0;
  private readonly unsubscribe: () => void;

  constructor(private readonly link: RedisLink, private readonly loader: BaseLoader, private readonly opts: RedisStoreOptions) {
    this.epoch = new SharedEpoch(link);
    this.views = new CounterViews();
    this.whileAway = new DegradedMode(loader, opts);
    this.batches = new TenantBatches(link, this.epoch, this.views, opts, {
      track: (p) => this.track(p),
      defer: (c) => this.whileAway.defer(c),
    });
    this.unwritten = new UnwrittenUsage(link, this.epoch, opts.presence);
    this.leases = new LeaseBook(this.views, {
      acquire: (req, units, lag) => this.acquireLease(req, units, lag),
      trim: (lease, now) => this.trimLease(lease, now),
      live: () => opts.presence.live,
      self: () => opts.presence.id,
    });
    this.unsubscribe = link.onStatus((up) => {
      if (up) this.recover();
      else {
        this.whileAway.away();
        this.leases.endFor(null, this.lastExpire);
      }
    });
    if (link.up) this.recover();
  }

  /** Resolves once shared state is joined, or after `timeoutMs` (then admissions start degraded). */
  async whenReady(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (!this.degraded) return true;
      await (this.ready ?? new Promise((r) => setTimeout(r, 50)));
    }
    return !this.degraded;
  }

  /** True while admissions with money claims are refused (Redis away or not yet synchronised). */
  get degraded(): boolean {
    return !this.link.up || this.ready !== null || this.epoch.current === 0;
  }

  private get client(): Redis {
    return this.link.client;
  }

  /** (Re)joins shared state: epoch, replay of what could not be written, unwritten usage. */
  private recover(): void {
    const run = async () => {
      const { epoch, restarted } = await this.epoch.join();
      await this.opts.presence.beat();
      if (restarted) {
        // A new life of Redis: reservations, leases and unwritten usage from before are gone with it.
        this.whileAway.forget();
        this.leases.forget();
        for (const r of this.reservations.values()) this.expiredHere.add(r);
        this.reservations.clear();
      }
      const replay = this.whileAway.takeDeferred();
      const replayed = Promise.all(replay.map((c) => new Promise<void>((done) => this.batches.enqueueSettle(c, done))));
      this.batches.flush();
      await replayed;
      await this.unwritten.resync();
      const touched = this.whileAway.takeTouched();
      await Promise.all(touched.map((key) => invalidateScript.run(this.client, [this.epoch.key(key)], [])));
      this.whileAway.recovered({ epoch, restarted, replayed: replay.length, reloaded: touched.length });
    };
    const p = run().catch((err) => {
      this.opts.log.warn('shared_state_recovery_failed', errorFields(err));
      this.whileAway.away();
      // The link stays up but a command failed: try again shortly.
      setTimeout(() => { if (this.link.up) this.recover(); }, 1000).unref();
    }).finally(() => { if (this.ready === p) this.ready = null; });
    this.ready = p;
  }

  /** Ends every lease (what they did not use goes back), then waits as `drain` says. */
  async drain(): Promise<void> {
    this.leases.endFor(null, this.lastExpire);
    this.batches.flush();
    // A lease still being asked for ends as it is granted: its give-back is waited for too.
    await this.leases.answered();
    this.batches.flush();
    await Promise.allSettled([...this.inFlight, ...(this.ready ? [this.ready] : [])]);
  }

  get open(): number {
    return this.reservations.size;
  }

  private track<T>(p: Promise<T>): Promise<T> {
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p)).catch(() => undefined);
    return p;
  }

  admit(r: AdmissionRequest): AdmissionVerdict | Promise<AdmissionVerdict> {
    if (r.now - this.lastExpire >= 1000) this.expire(r.now);
    if (this.degraded) return this.whileAway.admit(r);
    if (this.leases.take(r)) {
      this.reservations.set(r.id, r);
      return null;
    }
    return this.admitShared(r, 0);
  }

  /** A lease is one admission in Redis (leases.ts); it is not a reservation of this instance's. */
  private acquireLease(req: AdmissionRequest, units: number, lag: number): Promise<boolean> {
    if (this.degraded) return Promise.resolve(false);
    return this.admitShared(req, 0, units, lag).then((v) => v === null);
  }

  private trimLease(lease: Lease, now: number): void {
    this.finish({
      mode: 't', r: lease.req, now, lease: lease.req.id, units: Math.max(0, lease.freeUnits),
      actual: { cost: Math.max(0, lease.freeAmount), tokens: Math.max(0, lease.freeTokens) },
    });
  }

  private admitShared(r: AdmissionRequest, attempt: number, units = 1, lag = 0): Promise<AdmissionVerdict> {
    return this.batches.enqueueAdmit(r, units, lag).then((answer) => {
      if (answer[0] === 'e') throw new Error(answer[1]);
      if (answer[0] !== 'm') return this.verdictOf(r, answer, lag > 0);
      // Only an epoch change under way or invalidations without end get here more than a few times.
      if (attempt >= 8) throw new Error(`admission bases for request ${r.id} could not be loaded into shared state`);
      // Money counters to load first; after a few invalidations in a row, take the freshest read.
      const loads: Promise<void>[] = [];
      for (let i = 1; i < answer.length; i += 3) loads.push(this.load(r, answer[i], answer[i + 1], answer[i + 2], attempt >= 3));
      return Promise.all(loads).then(() => this.admitShared(r, attempt + 1, units, lag));
    }).catch((err) => {
      if (lag > 0) throw err;
      if (err instanceof SharedStateAway || !this.link.up || isConnectionError(err)) return this.whileAway.admit(r);
      throw err;
    });
  }

  /** A lease is not one of this instance's reservations (leases.ts); its stale bases are re-read all the same. */
  private verdictOf(r: AdmissionRequest, a: string[], lease: boolean): AdmissionVerdict {
    const refusal = refusalOf(r, a);
    if (refusal) return refusal;
    if (!lease) this.reservations.set(r.id, r);
    for (let i = 1; i < a.length; i++) this.refreshStale(r, a[i]);
    return null;
  }

  /** A stale base answers while it is re-read in the background. */
  private refreshStale(r: AdmissionRequest, fullKey: string): void {
    if (this.loads.has(fullKey)) return;
    const p = this.client.hmget(fullKey, 'settled', 'gen')
      .then(([settled, gen]) => this.load(r, fullKey, settled ?? '0', gen ?? '0', false, false))
      .catch((err) => this.opts.log.warn('admission_base_refresh_failed', errorFields(err)));
    this.track(p);
  }

  /** One load per counter at a time in this instance; the base is set only if nothing changed meanwhile. */
  private load(r: AdmissionRequest, fullKey: string, settled: string, gen: string, force: boolean, onlyIfInvalid = true): Promise<void> {
    let p = this.loads.get(fullKey);
    if (p) return p;
    const read = async () => {
      let value: number;
      let epoch = '';
      const isCredit = r.credit !== null && fullKey === this.epoch.key(r.credit.key);
      if (isCredit) {
        const c = await this.loader.credit(r.credit!.accountId);
        value = c.spendable;
        epoch = c.epoch;
      } else {
        const claim = r.spend.find((c) => this.epoch.key(c.key) === fullKey);
        if (!claim) return;
        value = await this.loader.spend(claim);
      }
      // Others' unwritten usage lowers a balance and raises a spend.
      const sign = isCredit ? -1 : 1;
      // Whose tenant an account is in, for an invalidation by an instance that never served it.
      if (isCredit) void this.client.hset(this.epoch.key('owners'), String(r.credit!.accountId), String(r.ownerId)).catch(() => undefined);
      await loadScript.run(this.client, [fullKey], [
        force ? await this.client.hget(fullKey, 'gen') ?? '0' : gen, settled, value, sign, r.now, epoch,
        onlyIfInvalid ? '1' : '0', this.opts.presence.id, ...this.opts.presence.ids,
      ]);
    };
    p = read().finally(() => this.loads.delete(fullKey));
    this.loads.set(fullKey, p);
    return p;
  }

  settle(r: AdmissionRequest, actual: Actual, now: number): void {
    this.finish({ mode: 's', r, actual, now });
  }

  release(r: AdmissionRequest, now: number): void {
    this.finish({ mode: 'r', r, actual: { cost: 0, tokens: 0 }, now });
  }

  private finish(c: Closing): void {
    if (c.mode === 't') return this.send(c);
    const { r } = c;
    // A request admitted under a lease settles or releases its part of the lease (leases.ts).
    const lease = c.mode === 's' || c.mode === 'r' ? this.leases.of(r) : undefined;
    if (lease) {
      this.leases.closed(r, c.now);
      if (this.reservations.get(r.id) === r) this.reservations.delete(r.id);
    } else {
      if (this.whileAway.closedLocally(c)) return;
      const open = this.reservations.get(r.id) === r;
      const expired = this.expiredHere.has(r);
      if (!open && !expired) return;
      this.reservations.delete(r.id);
      this.expiredHere.delete(r);
    }
    const cost = c.actual.cost > 0 && Number.isFinite(c.actual.cost) ? c.actual.cost : 0;
    if (c.mode === 's' && r.credit && cost > 0) this.unwritten.note(r, cost);
    // A part of a lease still under way is covered by what the lease holds: nothing to wait for.
    this.send(lease ? { mode: c.mode === 's' ? 'l' : 'q', r, actual: c.actual, now: c.now, lease: lease.req.id } : c, !lease || lease.ended);
  }

  /** `awaited`: sent before this task ends, and `applied` answers when Redis has it. */
  private send(c: Closing, awaited = false): void {
    if (!this.link.up || this.ready) this.whileAway.defer(c);
    else if (awaited) {
      const { r } = c;
      this.closings.set(r, new Promise<void>((resolve) => this.batches.enqueueSettle(c, () => {
        this.closings.delete(r);
        resolve();
      }, true)));
    } else this.batches.enqueueSettle(c);
  }

  /**
   * A reservation's settle or release goes to Redis before this task ends (batches.ts), and so
   * does a request's part of a lease that ended (with its last call, leases.ts); this resolves
   * with the batch's answer (or its failure: then it waits for replay). A part of a lease still
   * under way has nothing to wait for: the lease holds more than the part until it ends, and a
   * lease is only kept past its last call far from the floor (leases.ts).
   */
  applied(r: AdmissionRequest): Promise<void> | undefined {
    return this.closings.get(r);
  }

  /**
   * The recorder's hook after a batch commits: these charges are now in the database, so the
   * counters stop holding them as this instance's unwritten usage.
   */
  onWritten(charges: ReadonlyMap<number, number>): void {
    const byKey = this.unwritten.written(charges);
    if (!this.link.up || this.ready) return; // the resync on recovery writes the rest in full
    // The settles that added these charges go first, so a counter's part never goes below what is unwritten.
    this.batches.flush();
    for (const [key, amount] of byKey) this.track(this.unwritten.lower(key, amount).catch(() => undefined));
  }

  invalidate(accountId: number | null): void {
    this.leases.endFor(accountId, this.lastExpire);
    const keys = this.batches.creditKeys(accountId);
    this.whileAway.invalidate(accountId);
    if (keys.length === 0 && this.link.up && !this.ready) {
      // Not served here (yet): the tenant comes from the shared account → Owner map.
      this.track(this.invalidateElsewhere(accountId).catch((err) => this.opts.log.warn('admission_invalidate_failed', { account: accountId, ...errorFields(err) })));
      return;
    }
    for (const key of keys) {
      if (!this.link.up || this.ready) {
        this.whileAway.touched(key);
        continue;
      }
      this.track(invalidateScript.run(this.client, [this.epoch.key(key)], []).catch((err) => {
        this.whileAway.touched(key);
        this.opts.log.warn('admission_invalidate_failed', { account: accountId, ...errorFields(err) });
      }));
    }
  }

  private async invalidateElsewhere(accountId: number | null): Promise<void> {
    const owners = accountId === null
      ? await this.client.hgetall(this.epoch.key('owners'))
      : { [accountId]: await this.client.hget(this.epoch.key('owners'), String(accountId)) };
    await Promise.all(Object.entries(owners).map(([id, owner]) =>
      owner === null ? undefined : invalidateScript.run(this.client, [this.epoch.key(counterKeys.credit(Number(owner), Number(id)))], [])));
  }

  expire(now: number): void {
    this.lastExpire = now;
    this.whileAway.expire(now);
    const owners = new Set<number>();
    for (const r of this.reservations.values()) {
      if (r.expiresAt > now) continue;
      this.reservations.delete(r.id);
      if (this.leases.of(r)) {
        // Its part stays in the lease's record, which expires after it; a late settle still applies.
        this.opts.log.warn('reservation_expired', { request_id: r.id, owner: r.ownerId, amount: r.amount, tokens: r.tokens });
        continue;
      }
      this.expiredHere.add(r);
      owners.add(r.ownerId);
      // The view follows at once; Redis is swept below (and by any admission of the tenant).
      this.views.expired(r);
      this.opts.log.warn('reservation_expired', { request_id: r.id, owner: r.ownerId, amount: r.amount, tokens: r.tokens });
    }
    if (owners.size === 0 || !this.link.up || this.ready) return;
    for (const ownerId of owners) this.track(sweepScript.run(this.client, this.epoch.tenantKeys(ownerId), [now]).catch(() => undefined));
  }

  credit(key: string): { spendable: number; reserved: number } | undefined {
    return this.views.credit(key);
  }

  spend(key: string): { spent: number; reserved: number } | undefined {
    return this.views.spend(key);
  }

  rateUsed(claim: RateClaim, now: number): number {
    return this.views.rateUsed(claim, now);
  }

  /** Stops listening to the link; Redis itself is closed by its owner (the composition root). */
  async close(): Promise<void> {
    this.unsubscribe();
    await this.drain();
  }
}
