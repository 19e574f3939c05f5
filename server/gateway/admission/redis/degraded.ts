import type { Logger } from '../../../core/log';
import type { InstancePresence } from '../../../adapters/redis/presence';
import { MemoryAdmissionStore } from '../memory-store';
import type { Closing } from './batches';
import type { AdmissionRequest, AdmissionVerdict, BaseLoader, RateClaim } from '../store';

export interface DegradedOptions {
  refreshMs: number;
  log: Logger;
  /** Its count of live instances divides rate limits while Redis is away. */
  presence: InstancePresence;
  /** Retry-After of a refusal while shared state is away (ms). */
  retryAfterMs?: number;
}

const MAX_DEFERRED = 100_000;

/**
 * The shared store's degraded mode while Redis is away (docs/decisions.md): a request with money
 * claims (a charged account's credit, a spend cap) is refused `unavailable` (503
 * shared_state_unavailable with Retry-After): PostgreSQL alone cannot reserve across instances,
 * and money is not guessed. A request without money claims (Root, Owners) is admitted against
 * this instance's own counters at limit ÷ the instances alive before the outage. Settles and
 * releases that could not be written are kept here for replay, with the money counters they
 * touched, which are reloaded from PostgreSQL once Redis is back.
 */
export class DegradedMode {
  /** Admitted by the local fallback while Redis was away: settled there too. */
  private local: MemoryAdmissionStore;
  private admittedLocally = new WeakSet<AdmissionRequest>();
  private localTwin = new WeakMap<AdmissionRequest, AdmissionRequest>();
  private scaledClaims = new WeakMap<RateClaim, { live: number; claim: RateClaim }>();
  /** Settles and releases that could not reach Redis, replayed when it is back. */
  private deferred: Closing[] = [];
  /** Money keys whose counters missed a write during an outage: reloaded on recovery. */
  private touchedWhileAway = new Set<string>();
  private wasDown = false;

  constructor(loader: BaseLoader, private readonly opts: DegradedOptions) {
    this.local = new MemoryAdmissionStore(loader, { refreshMs: opts.refreshMs, log: opts.log });
  }

  /** Redis went away (or a rejoin failed): said once per outage. */
  away(): void {
    if (this.wasDown) return;
    this.wasDown = true;
    this.opts.log.warn('shared_state_degraded', {
      message: 'Redis is away: charged accounts are refused (503 shared_state_unavailable) until it is back; Root and Owners continue with rate limits divided by the live instances',
      live_instances: this.opts.presence.live,
    });
  }

  /** Shared state is joined again; said when it had been away or Redis restarted. */
  recovered(fields: { epoch: number; restarted: boolean; replayed: number; reloaded: number }): void {
    if (this.wasDown || fields.restarted) {
      this.opts.log.info('shared_state_recovered', { epoch: fields.epoch, redis_restarted: fields.restarted, replayed: fields.replayed, reloaded_counters: fields.reloaded });
    }
    this.wasDown = false;
  }

  admit(r: AdmissionRequest): AdmissionVerdict | Promise<AdmissionVerdict> {
    const money = r.credit !== null || r.spend.some((c) => c.cap !== null);
    if (money) return { kind: 'unavailable', retryAt: r.now + (this.opts.retryAfterMs ?? 5000) };
    const live = Math.max(1, this.opts.presence.live);
    const rates = live === 1 ? r.rates : r.rates.map((c) => this.scaled(c, live));
    const local: AdmissionRequest = { ...r, spend: [], rates };
    const verdict = this.local.admit(local);
    const done = (v: AdmissionVerdict) => {
      if (v === null) this.admittedLocally.add(r);
      this.localTwin.set(r, local);
      return v;
    };
    return verdict instanceof Promise ? verdict.then(done) : done(verdict);
  }

  private scaled(claim: RateClaim, live: number): RateClaim {
    const hit = this.scaledClaims.get(claim);
    if (hit && hit.live === live) return hit.claim;
    const scaled = { ...claim, limit: Math.max(1, Math.floor(claim.limit / live)) };
    this.scaledClaims.set(claim, { live, claim: scaled });
    return scaled;
  }

  /** Settles or releases a reservation admitted here while Redis was away; false for any other. */
  closedLocally(c: Closing): boolean {
    const { r } = c;
    if (!this.admittedLocally.has(r)) return false;
    this.admittedLocally.delete(r);
    const twin = this.localTwin.get(r)!;
    if (c.mode === 's') this.local.settle(twin, c.actual, c.now);
    else this.local.release(twin, c.now);
    return true;
  }

  /** Keeps a settle or release for replay; its money counters are reloaded after it. */
  defer(c: Closing): void {
    if (c.r.credit) this.touchedWhileAway.add(c.r.credit.key);
    for (const s of c.r.spend) this.touchedWhileAway.add(s.key);
    if (this.deferred.length < MAX_DEFERRED) this.deferred.push(c);
    else this.opts.log.warn('shared_state_replay_dropped', { request_id: c.r.id });
  }

  /** A money counter changed while Redis could not hear it (an invalidation): reloaded on recovery. */
  touched(key: string): void {
    this.touchedWhileAway.add(key);
  }

  /** After a Redis restart, nothing from before is replayed: its reservations are gone with it. */
  forget(): void {
    this.deferred = [];
    this.touchedWhileAway.clear();
  }

  /** The settles and releases to replay now, in the order they were made. */
  takeDeferred(): Closing[] {
    const replay = this.deferred;
    this.deferred = [];
    return replay;
  }

  /** The money counters to reload now. */
  takeTouched(): string[] {
    const touched = [...this.touchedWhileAway];
    this.touchedWhileAway.clear();
    return touched;
  }

  invalidate(accountId: number | null): void {
    this.local.invalidate(accountId);
  }

  expire(now: number): void {
    this.local.expire(now);
  }
}
