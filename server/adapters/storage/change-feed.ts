import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type postgres from 'postgres';
import type { Tx } from './database';
import type { Logger } from '../../core/log';

/** The one channel every instance listens on. */
export const CHANGE_CHANNEL = 'switchyard_changes';
/**
 * The application_name of each instance's listening connection: exactly one per instance, so
 * counting them in pg_stat_activity counts the instances on the database.
 */
export const FEED_APPLICATION_NAME = 'switchyard-change-feed';
/** PostgreSQL refuses NOTIFY payloads from 8000 bytes; a larger batch becomes "re-read everything". */
const MAX_PAYLOAD = 7900;

/** On the wire: who sent it, and what changed, or that everything did, or that it just arrived. */
interface Envelope<T> {
  from: string;
  changes?: readonly T[];
  all?: true;
  hello?: true;
}

export interface FeedSubscriber<T> {
  changes(changes: T[]): void;
  resync(): void;
  instanceJoined(): void;
}

export interface PostgresChangeFeedOptions {
  log: Logger;
  /** Pause between attempts to listen again after the connection was lost. */
  retryMs?: number;
}

/**
 * LISTEN/NOTIFY on PostgreSQL between the instances sharing a database. Changes are sent with
 * pg_notify inside the writer's transaction, which PostgreSQL delivers at commit (never for a
 * rollback). The listening connection is this feed's own; when it is lost (PostgreSQL
 * restarted, the backend terminated) the feed listens again, retrying until it can, and then
 * asks its subscriber to re-read everything, since notifications sent meanwhile are gone.
 */
export class PostgresChangeFeed<T> {
  /** Tells this instance's own notifications apart: it applied them already. */
  readonly instanceId = randomUUID();
  private subscriber: FeedSubscriber<T> | undefined;
  /** Received but not yet handed over: a burst within one tick goes out as one batch. */
  private pending: T[] = [];
  private pendingResync = false;
  private pendingJoins = 0;
  private flushScheduled = false;
  private listening = false;
  private relistening: Promise<void> | null = null;
  private retryTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly retryMs: number;

  private constructor(private readonly client: postgres.Sql, private readonly log: Logger, retryMs: number) {
    this.retryMs = retryMs;
  }

  /** Connects and listens; fails when the database cannot be reached now. */
  static async open<T>(url: string, opts: PostgresChangeFeedOptions): Promise<PostgresChangeFeed<T>> {
    const connect = (await import('postgres')).default;
    let feed: PostgresChangeFeed<T> | undefined;
    const client = connect(url, {
      max: 1,
      // Held for the life of the instance: never closed for idleness or age.
      idle_timeout: 0,
      max_lifetime: null,
      connect_timeout: 10,
      fetch_types: false,
      onnotice: () => {},
      connection: { application_name: FEED_APPLICATION_NAME },
      onnotify: (channel: string, payload: string) => { if (channel === CHANGE_CHANNEL) feed?.received(payload); },
      onclose: () => feed?.lost(),
      // onnotify is a driver option its type declarations leave out (its listen() is built on it).
    } as postgres.Options<{}>);
    feed = new PostgresChangeFeed<T>(client, opts.log, opts.retryMs ?? 500);
    try {
      await feed.listen();
    } catch (err) {
      await client.end({ timeout: 0 }).catch(() => {});
      throw err;
    }
    // Others learn an instance arrived (for the per-instance limits warning).
    await feed.sendOutside({ from: feed.instanceId, hello: true }).catch(() => {});
    return feed;
  }

  private async listen(): Promise<void> {
    await this.client.unsafe(`listen "${CHANGE_CHANNEL}"`);
    this.listening = true;
  }

  async publish(tx: Tx, changes: readonly T[]): Promise<void> {
    if (changes.length === 0) return;
    let payload = JSON.stringify({ from: this.instanceId, changes } satisfies Envelope<T>);
    if (Buffer.byteLength(payload) > MAX_PAYLOAD) payload = JSON.stringify({ from: this.instanceId, all: true } satisfies Envelope<T>);
    await tx.execute(sql`select pg_notify(${CHANGE_CHANNEL}, ${payload})`);
  }

  subscribe(subscriber: FeedSubscriber<T>): void {
    this.subscriber = subscriber;
    this.scheduleFlush();
  }

  /** Other instances' listening connections on this database now. */
  async otherInstances(): Promise<number> {
    const [{ n }] = await this.client<{ n: number }[]>`
      select count(*)::int as n from pg_stat_activity
      where datname = current_database() and application_name = ${FEED_APPLICATION_NAME} and pid <> pg_backend_pid()`;
    return n;
  }

  /** Whether the listening connection is up (false while it is being re-established). */
  get connected(): boolean {
    return this.listening;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.listening = false;
    clearTimeout(this.retryTimer);
    await this.client.end({ timeout: 1 }).catch(() => {});
  }

  private sendOutside(envelope: Envelope<T>): Promise<unknown> {
    return this.client`select pg_notify(${CHANGE_CHANNEL}, ${JSON.stringify(envelope)})`;
  }

  private received(payload: string): void {
    let envelope: Envelope<T>;
    try {
      envelope = JSON.parse(payload);
    } catch {
      this.log.warn('change_feed_bad_payload', { bytes: payload.length });
      return;
    }
    if (!envelope || typeof envelope !== 'object' || envelope.from === this.instanceId) return;
    if (envelope.hello) this.pendingJoins++;
    else if (envelope.all) this.pendingResync = true;
    else if (Array.isArray(envelope.changes)) this.pending.push(...envelope.changes);
    this.scheduleFlush();
  }

  private scheduleFlush(): void {
    if (this.flushScheduled || !this.subscriber) return;
    if (!this.pendingResync && this.pending.length === 0 && this.pendingJoins === 0) return;
    this.flushScheduled = true;
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.flushScheduled = false;
    const s = this.subscriber;
    if (!s || this.closed) return;
    const { pending, pendingResync, pendingJoins } = this;
    this.pending = [];
    this.pendingResync = false;
    this.pendingJoins = 0;
    // A re-read of everything covers any single change that came with it.
    if (pendingResync) s.resync();
    else if (pending.length) s.changes(pending);
    if (pendingJoins) s.instanceJoined();
  }

  private lost(): void {
    if (this.closed || !this.listening) return;
    this.listening = false;
    this.log.warn('change_feed_lost', { message: 'the connection listening for changes from other instances was lost; listening again' });
    this.relisten();
  }

  private relisten(): void {
    if (this.closed || this.relistening) return;
    this.relistening = this.listen().then(
      () => {
        this.relistening = null;
        if (this.closed) return;
        this.log.warn('change_feed_resumed', { message: 'listening for changes again; every snapshot is re-read, since changes made meanwhile were not heard' });
        this.pendingResync = true;
        this.scheduleFlush();
      },
      () => {
        this.relistening = null;
        if (this.closed) return;
        this.retryTimer = setTimeout(() => this.relisten(), this.retryMs);
      },
    );
  }
}
