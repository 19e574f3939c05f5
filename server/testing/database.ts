import { randomBytes } from 'node:crypto';
import { openDatabase, migrate, type Database } from '../adapters/storage/database';
import { ensureRoot } from '../app/bootstrap-root';

/**
 * Tests run on throwaway PGlite databases (memory://) by default, and on a real PostgreSQL when TEST_DATABASE_URL
 * names one (an admin connection, e.g. postgres://postgres@127.0.0.1:5432/postgres): each
 * gateway then gets a database of its own, dropped afterwards.
 */
export async function freshDatabaseUrl(admin = process.env.TEST_DATABASE_URL, prefix = 'sy_test'): Promise<{ url: string; drop: () => Promise<void> }> {
  if (!admin) return { url: 'memory://', drop: async () => {} };
  const postgres = (await import('postgres')).default;
  const name = `${prefix}_${process.pid}_${randomBytes(4).toString('hex')}`;
  const sql = postgres(admin, { max: 1, onnotice: () => {} });
  await sql.unsafe(`CREATE DATABASE ${name}`);
  await sql.end();
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const s = postgres(admin, { max: 1, onnotice: () => {} });
      await s.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
      await s.end();
    },
  };
}

/** A fresh, migrated database with Root in it, without a gateway: for state-layer tests. */
export async function openTestDatabase(): Promise<{ database: Database; close: () => Promise<void> }> {
  const fresh = await freshDatabaseUrl();
  const database = await openDatabase(fresh.url, '/tmp/unused');
  await migrate(database);
  await ensureRoot(database.db, undefined);
  return { database, close: async () => { await database.close(); await fresh.drop(); } };
}
