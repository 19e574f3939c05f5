import { afterEach, describe, expect, it } from 'vitest';
import postgres from 'postgres';
import { freshDatabaseUrl } from '../../testing/database';
import { TcpRelay } from '../../testing/tcp-relay';
import { createLogger } from '../../core/log';
import { openDatabase, type Database } from './database';
import { FEED_APPLICATION_NAME, PostgresChangeFeed, type FeedSubscriber } from './change-feed';

type Item = { k: string; id?: number };

/** What one feed heard, in order. */
class Heard implements FeedSubscriber<Item> {
  batches: Item[][] = [];
  resyncs = 0;
  joins = 0;
  changes(c: Item[]) { this.batches.push(c); }
  resync() { this.resyncs++; }
  instanceJoined() { this.joins++; }
  get items() { return this.batches.flat(); }
}

const logged = () => {
  const lines: string[] = [];
  return { lines, log: createLogger((l) => lines.push(l), 'debug') };
};

const settle = (ms = 300) => new Promise((r) => setTimeout(r, ms));

describe.runIf(process.env.TEST_DATABASE_URL)('the PostgreSQL change feed', () => {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const fn of cleanup.reverse()) await fn().catch(() => undefined);
    cleanup.length = 0;
  });

  async function setup() {
    const fresh = await freshDatabaseUrl();
    cleanup.push(fresh.drop);
    const database: Database = await openDatabase(fresh.url, '/nonexistent');
    cleanup.push(() => database.close());
    const open = async (url = fresh.url) => {
      const { lines, log } = logged();
      const feed = await PostgresChangeFeed.open<Item>(url, { log, retryMs: 100 });
      cleanup.push(() => feed.close());
      const heard = new Heard();
      feed.subscribe(heard);
      return { feed, heard, lines };
    };
    return { url: fresh.url, database, open };
  }

  it('delivers at commit to the other instances only, never for a rollback, a burst as one batch', async () => {
    const { database, open } = await setup();
    const a = await open();
    const b = await open();

    await database.db.transaction(async (tx) => {
      await a.feed.publish(tx, [{ k: 'account', id: 1 }]);
      await settle(200);
      // Not before the commit.
      expect(b.heard.items).toEqual([]);
    });
    await expect.poll(() => b.heard.items, { timeout: 1000, interval: 10 }).toEqual([{ k: 'account', id: 1 }]);

    await database.db.transaction(async (tx) => {
      await a.feed.publish(tx, [{ k: 'account', id: 2 }]);
      tx.rollback();
    }).catch(() => undefined);
    // Twenty notifications committed together reach b as one handed-over batch.
    await database.db.transaction(async (tx) => {
      for (let i = 100; i < 120; i++) await a.feed.publish(tx, [{ k: 'credit', id: i }]);
    });
    await expect.poll(() => b.heard.items.length, { timeout: 1000, interval: 10 }).toBe(21);
    expect(b.heard.items.some((c) => c.id === 2)).toBe(false);
    expect(b.heard.batches.length).toBeLessThanOrEqual(3);
    // Its own notifications a feed ignores: its instance applied them already.
    expect(a.heard.items).toEqual([]);
  });

  it('turns a batch too large for one notification into a re-read of everything', async () => {
    const { database, open } = await setup();
    const a = await open();
    const b = await open();
    const many = Array.from({ length: 2000 }, (_, i) => ({ k: 'account', id: i + 1 }));
    await database.db.transaction(async (tx) => { await a.feed.publish(tx, many); });
    await expect.poll(() => b.heard.resyncs, { timeout: 1000, interval: 10 }).toBe(1);
    expect(b.heard.items).toEqual([]);
  });

  it('counts the other instances and tells the others when one joins', async () => {
    const { open } = await setup();
    const a = await open();
    expect(await a.feed.otherInstances()).toBe(0);
    const b = await open();
    await expect.poll(() => a.heard.joins, { timeout: 1000, interval: 10 }).toBe(1);
    expect(await a.feed.otherInstances()).toBe(1);
    expect(await b.feed.otherInstances()).toBe(1);
    expect(b.heard.joins).toBe(0);
    await b.feed.close();
    await expect.poll(() => a.feed.otherInstances(), { timeout: 5000 }).toBe(0);
  });

  it('listens again after its backend is terminated, re-reads everything, and hears the next change', async () => {
    const { url, database, open } = await setup();
    const a = await open();
    const b = await open();
    const admin = postgres(url, { max: 1, onnotice: () => {} });
    cleanup.push(() => admin.end());
    const killed = await admin`select pg_terminate_backend(pid) from pg_stat_activity
      where datname = current_database() and application_name = ${FEED_APPLICATION_NAME}`;
    expect(killed).toHaveLength(2);

    await expect.poll(() => b.heard.resyncs, { timeout: 5000, interval: 20 }).toBe(1);
    await expect.poll(() => a.heard.resyncs, { timeout: 5000, interval: 20 }).toBe(1);
    const events = b.lines.map((l) => JSON.parse(l)).filter((l) => l.level === 'warn').map((l) => l.event);
    expect(events).toEqual(['change_feed_lost', 'change_feed_resumed']);
    expect(b.feed.connected).toBe(true);

    await database.db.transaction(async (tx) => { await a.feed.publish(tx, [{ k: 'owner-config', id: 7 }]); });
    await expect.poll(() => b.heard.items, { timeout: 1000, interval: 10 }).toEqual([{ k: 'owner-config', id: 7 }]);
  });

  it('keeps trying while the database cannot be reached, then re-reads everything once it can', async () => {
    const { url, database, open } = await setup();
    const via = await TcpRelay.before(url);
    cleanup.push(() => via.relay.down());
    const a = await open();
    const b = await open(via.url);

    await via.relay.down();
    await expect.poll(() => b.feed.connected, { timeout: 5000, interval: 20 }).toBe(false);
    // Made while b was away: b never hears it, it re-reads instead.
    await database.db.transaction(async (tx) => { await a.feed.publish(tx, [{ k: 'account', id: 9 }]); });
    await settle(1000);
    expect(b.heard.resyncs).toBe(0);

    await via.relay.up();
    await expect.poll(() => b.heard.resyncs, { timeout: 15_000, interval: 50 }).toBe(1);
    expect(b.heard.items).toEqual([]);
    await database.db.transaction(async (tx) => { await a.feed.publish(tx, [{ k: 'account', id: 10 }]); });
    await expect.poll(() => b.heard.items, { timeout: 1000, interval: 10 }).toEqual([{ k: 'account', id: 10 }]);
  }, 30_000);
});
