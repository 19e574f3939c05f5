import { inArray } from 'drizzle-orm';
import type { Db, Tx } from '../../adapters/storage/database';
import { accounts } from '../../adapters/storage/schema';
import { errorFields, type Logger } from '../../core/log';
import type { AccountCache } from '../accounts/account-cache';
import type { OwnerConfigStore } from '../owner-config/store';
import type { KeyPool } from '../provider-keys/key-pool';
import type { Change, ChangeFeed } from './change';
import { perInstanceLimitsWarning } from './instances';

/** What the admin services need: announce inside the transaction, apply here after commit. */
export interface Changes {
  /** Inside the transaction making the change: the other instances hear of it when it commits, and only then. */
  announce(tx: Tx, changes: readonly Change[]): Promise<void>;
  /** After commit: this instance's snapshots follow at once, before the admin call answers. */
  apply(changes: readonly Change[]): Promise<void>;
}

export interface StateChangesDeps {
  db: Db;
  feed: ChangeFeed;
  accounts: AccountCache;
  config: OwnerConfigStore;
  pool: KeyPool;
  log: Logger;
  /** Rate limits, reservations and the rest are shared between instances (REDIS_URL): no warning about them. */
  sharedLimits: boolean;
}

/** Delay before a remote change that could not be applied (database away) is tried again. */
const RETRY_MS = 1000;

/** What a batch of changes asks of the snapshots, each thing once. */
interface Plan {
  allAccounts: boolean;
  accountIds: Set<number>;
  configOwners: Set<number>;
  keyOwners: Set<number>;
  wake: Set<number>;
}

export function planOf(changes: readonly Change[]): Plan {
  const p: Plan = { allAccounts: false, accountIds: new Set(), configOwners: new Set(), keyOwners: new Set(), wake: new Set() };
  for (const c of changes) {
    switch (c.k) {
      case 'accounts': p.allAccounts = true; break;
      case 'account': case 'credit': p.accountIds.add(c.id); break;
      case 'owner-config': p.configOwners.add(c.owner); break;
      case 'provider-keys':
        p.keyOwners.add(c.owner);
        if (c.wake !== undefined) p.wake.add(c.wake);
        break;
    }
  }
  return p;
}

/** A payload from another process is checked before it touches anything. */
function isChange(c: unknown): c is Change {
  if (!c || typeof c !== 'object') return false;
  const o = c as Record<string, unknown>;
  const id = (v: unknown) => Number.isSafeInteger(v) && (v as number) > 0;
  switch (o.k) {
    case 'accounts': return true;
    case 'account': case 'credit': return id(o.id);
    case 'owner-config': return id(o.owner);
    case 'provider-keys': return id(o.owner) && (o.wake === undefined || id(o.wake));
    default: return false;
  }
}

/**
 * Keeps this instance's snapshots (account cache, and through its invalidation the proxy's
 * profiles and balances; owner configs; the key pool) in step with changes made through any
 * instance's admin API. The same `apply` serves an admin call here and a notification from
 * another instance, so both act alike.
 */
export class StateChanges implements Changes {
  /** Remote changes are applied one batch after another, so an older reload never lands last. */
  private queue: Promise<void> = Promise.resolve();
  private retry: NodeJS.Timeout | undefined;
  private warned = false;
  private closed = false;

  constructor(private readonly d: StateChangesDeps) {
    d.feed.subscribe({
      changes: (changes) => this.enqueue(() => this.apply(changes.filter(isChange))),
      resync: () => this.enqueue(() => this.resync()),
      instanceJoined: () => { void this.warnIfShared(); },
    });
  }

  announce(tx: Tx, changes: readonly Change[]): Promise<void> {
    return this.d.feed.publish(tx, changes);
  }

  async apply(changes: readonly Change[]): Promise<void> {
    const p = planOf(changes);
    // Revocations first and synchronously: the next request already reads the database.
    if (p.allAccounts) this.d.accounts.invalidateAll();
    else for (const id of p.accountIds) this.d.accounts.invalidateAccount(id);
    for (const owner of p.configOwners) await this.d.config.refresh(owner);
    for (const id of p.wake) this.d.pool.wake(id);
    for (const owner of p.keyOwners) await this.d.pool.reload(owner);
  }

  /** After missed notifications: every snapshot is re-read, as at start-up. */
  async resync(): Promise<void> {
    this.d.accounts.invalidateAll();
    await this.d.config.refreshAll();
    const owners = await this.d.db.select({ id: accounts.id }).from(accounts).where(inArray(accounts.role, ['root', 'owner']));
    // Owners this pool knows but the database no longer has (deleted meanwhile) reload to nothing.
    await this.d.pool.reloadAll(new Set([...this.d.pool.owners(), ...owners.map((o) => o.id)]));
  }

  /** Logs the per-instance limits warning once, when another instance shares the database. */
  async warnIfShared(): Promise<void> {
    if (this.warned || this.closed || this.d.sharedLimits) return;
    let others: number;
    try {
      others = await this.d.feed.otherInstances();
    } catch (err) {
      this.d.log.warn('instance_count_failed', errorFields(err));
      return;
    }
    const message = perInstanceLimitsWarning(others, this.d.sharedLimits);
    if (!message || this.warned) return;
    this.warned = true;
    this.d.log.warn('limits_per_instance', { message, other_instances: others });
  }

  private enqueue(work: () => Promise<void>): void {
    this.queue = this.queue.then(work).catch((err) => {
      if (this.closed) return;
      // Half-applied is safe to redo; everything is re-read after a pause (database away).
      this.d.log.warn('change_apply_failed', { message: `a change from another instance could not be applied; re-reading every snapshot in ${RETRY_MS} ms`, ...errorFields(err) });
      clearTimeout(this.retry);
      this.retry = setTimeout(() => this.enqueue(() => this.resync()), RETRY_MS);
    });
  }

  /**
   * Stops retrying; the feed itself is closed by its owner. A batch under way is not waited
   * for: with the database away it could hold shutdown, and what it fails to do no longer matters.
   */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
  }
}
