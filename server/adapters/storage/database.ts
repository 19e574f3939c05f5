import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { migrationsFolder } from '../../core/paths';
import type { PgDatabase } from 'drizzle-orm/pg-core';
import * as schema from './schema';
import { createLogger, type Logger } from '../../core/log';
import { lockDataDir } from './data-dir-lock';

export type Db = PgDatabase<any, typeof schema>;
/** A transaction handle: everything that writes takes one, so callers can group writes. */
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];

export interface Database {
  db: Db;
  kind: 'pglite' | 'postgres';
  /** Runs raw SQL and returns rows, hiding the drivers' different result shapes. */
  rows<T = Record<string, unknown>>(query: import('drizzle-orm').SQL): Promise<T[]>;
  /**
   * Serializes start-up work (migrations, bootstrap) across instances. On PostgreSQL, a
   * session advisory lock every instance waits for; on PGlite nothing is needed: an on-disk
   * database is this process's alone (the DATA_DIR lock) and an in-memory one is never shared.
   */
  withStartupLock<T>(fn: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

const STARTUP_LOCK = 7_134_201;

export interface OpenOptions {
  log?: Logger;
}

export async function openDatabase(url: string | undefined, dataDir: string, opts: OpenOptions = {}): Promise<Database> {
  const log = opts.log ?? createLogger();
  if (url?.startsWith('postgres')) {
    const postgres = (await import('postgres')).default;
    const { drizzle } = await import('drizzle-orm/postgres-js');
    // connect_timeout bounds each attempt while the database is away (a usage flush at shutdown retries until its deadline).
    const client = postgres(url, { max: 10, onnotice: () => {}, idle_timeout: 30, connect_timeout: 10 });
    const db = drizzle(client, { schema }) as unknown as Db;
    return {
      db,
      kind: 'postgres',
      rows: async (q) => (await db.execute(q)) as any,
      async withStartupLock(fn) {
        // Held by one reserved session for the whole of fn: advisory locks belong to a
        // session, and fn's queries run on the pool's other connections.
        const conn = await client.reserve();
        try {
          const [{ locked }] = await conn`select pg_try_advisory_lock(${STARTUP_LOCK}::bigint) as locked`;
          if (!locked) {
            // Another instance is migrating: say why this start pauses, then wait for it.
            log.info('startup_lock_wait', { message: 'another instance holds the start-up lock (migrations, Root bootstrap); waiting' });
            await conn`select pg_advisory_lock(${STARTUP_LOCK}::bigint)`;
          }
          return await fn();
        } finally {
          await conn`select pg_advisory_unlock(${STARTUP_LOCK}::bigint)`.catch(() => {});
          conn.release();
        }
      },
      close: () => client.end({ timeout: 5 }),
    };
  }
  const { RemotePglite } = await import('./pglite-remote');
  const { drizzle } = await import('drizzle-orm/pglite');
  let dir: string | undefined;
  let unlock = async () => {};
  if (url !== 'memory://') {
    unlock = await lockDataDir(dataDir, log);
    dir = path.join(dataDir, 'pglite');
    mkdirSync(dir, { recursive: true });
  }
  let client: Awaited<ReturnType<typeof RemotePglite.create>>;
  try {
    // On its own thread (pglite-worker.mjs): in-process, every batch of usage records stopped
    // all requests while PGlite ran it.
    client = await RemotePglite.create(dir, migrationsFolder);
  } catch (err) {
    await unlock();
    throw err;
  }
  const db = drizzle({ client: client as any, schema }) as unknown as Db;
  return {
    db,
    kind: 'pglite',
    rows: async (q) => ((await db.execute(q)) as any).rows,
    withStartupLock: (fn) => fn(),
    async close() {
      try {
        await client.close();
      } finally {
        await unlock();
      }
    },
  };
}

export async function migrate(database: Database): Promise<void> {
  if (database.kind === 'postgres') {
    const { migrate: run } = await import('drizzle-orm/postgres-js/migrator');
    await run(database.db as any, { migrationsFolder });
  } else {
    const { migrate: run } = await import('drizzle-orm/pglite/migrator');
    await run(database.db as any, { migrationsFolder });
  }
}
