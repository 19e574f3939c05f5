import type { Tx } from '../../adapters/storage/database';

/**
 * What an admin change touched, as every instance's snapshots need to hear it. Small on
 * purpose: a notification says what to re-read, never the data itself, so a receiver always
 * reads what the database committed.
 */
export type Change =
  /** The account's row or key (profile, status, suspension, rotation, deletion): drop it. */
  | { k: 'account'; id: number }
  /** Many accounts at once (a subtree moved tenant, a cascaded mapper): drop them all. */
  | { k: 'accounts' }
  /** The account's credit (a grant, a take-back, a refund): its spendable balance is re-read. */
  | { k: 'credit'; id: number }
  /** The Owner's `/x-config` values. */
  | { k: 'owner-config'; owner: number }
  /** The Owner's provider keys; `wake` is a key the Owner re-enabled or gave a new secret. */
  | { k: 'provider-keys'; owner: number; wake?: number };

/** What a feed hands its subscriber: changes made on other instances, and when to start over. */
export interface ChangeSubscriber {
  /** Changes other instances committed, gathered per tick (one call for a burst). */
  changes(changes: Change[]): void;
  /** Notifications may have been missed (the listening connection was lost): re-read everything. */
  resync(): void;
  /** Another instance started listening on the same database. */
  instanceJoined(): void;
}

/**
 * How instances sharing one database tell each other what changed. The PostgreSQL
 * implementation (adapters/storage/change-feed.ts) sends inside the transaction, so a change
 * is announced exactly when it commits and a rolled-back one announces nothing.
 */
export interface ChangeFeed {
  /** Announces `changes` to the other instances when `tx` commits. */
  publish(tx: Tx, changes: readonly Change[]): Promise<void>;
  /** One subscriber; what arrived before it subscribed is handed over at once. */
  subscribe(subscriber: ChangeSubscriber): void;
  /** Other instances listening on the same database now. */
  otherInstances(): Promise<number>;
  close(): Promise<void>;
}

/**
 * The feed of an embedded database (PGlite): one process owns it (the DATA_DIR lock; an
 * in-memory one is never shared), so there is nobody to tell. The admin call applies its
 * change to this instance's snapshots itself, as with PostgreSQL.
 */
export class LocalChangeFeed implements ChangeFeed {
  async publish(): Promise<void> {}
  subscribe(): void {}
  async otherInstances(): Promise<number> { return 0; }
  async close(): Promise<void> {}
}
