import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { migrationsFolder } from '../../core/paths';
import type { PgDatabase } from 'drizzle-orm/pg-core';
import * as schema from './schema';

export type Db = PgDatabase<any, typeof schema>;
/** A transaction handle: everything that writes takes one, so callers can group writes. */
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];

export interface Database {
  db: Db;
  kind: 'pglite' | 'postgres';
  /** Runs raw SQL and returns rows, hiding the drivers' different result shapes. */
  rows<T = Record<string, unknown>>(query: import('drizzle-orm').SQL): Promise<T[]>;
  /** Serializes start-up work (migrations, bootstrap) across instances sharing one PostgreSQL. */
  withStartupLock<T>(fn: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

const STARTUP_LOCK = 7_134_201;

export async function openDatabase(url: string | undefined, dataDir: string): Promise<Database> {
  if (url?.startsWith('postgres')) {
    const postgres = (await import('postgres')).default;
    const { drizzle } = await import('drizzle-orm/postgres-js');
    const client = postgres(url, { max: 10, onnotice: () => {}, idle_timeout: 30 });
    const db = drizzle(client, { schema }) as unknown as Db;
    return {
      db,
      kind: 'postgres',
      rows: async (q) => (await db.execute(q)) as any,
      async withStartupLock(fn) {
        const conn = await client.reserve();
        try {
          await conn`select pg_advisory_lock(${STARTUP_LOCK})`;
          return await fn();
        } finally {
          await conn`select pg_advisory_unlock(${STARTUP_LOCK})`.catch(() => {});
          conn.release();
        }
      },
      close: () => client.end({ timeout: 5 }),
    };
  }
  const { RemotePglite } = await import('./pglite-remote');
  const { drizzle } = await import('drizzle-orm/pglite');
  let dir: string | undefined;
  if (url !== 'memory://') {
    dir = path.join(dataDir, 'pglite');
    mkdirSync(dir, { recursive: true });
  }
  // On its own thread (pglite-worker.mjs): in-process, every batch of usage records stopped
  // all requests while PGlite ran it.
  const client = await RemotePglite.create(dir);
  const db = drizzle({ client: client as any, schema }) as unknown as Db;
  return {
    db,
    kind: 'pglite',
    rows: async (q) => ((await db.execute(q)) as any).rows,
    withStartupLock: (fn) => fn(),
    close: () => client.close(),
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
