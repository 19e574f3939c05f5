import { randomBytes } from 'node:crypto';

/**
 * Tests run on in-memory PGlite by default, and on a real PostgreSQL when TEST_DATABASE_URL
 * names one (an admin connection, e.g. postgres://postgres@127.0.0.1:5432/postgres): each
 * gateway then gets a database of its own, dropped afterwards.
 */
export async function freshDatabaseUrl(): Promise<{ url: string; drop: () => Promise<void> }> {
  const admin = process.env.TEST_DATABASE_URL;
  if (!admin) return { url: 'memory://', drop: async () => {} };
  const postgres = (await import('postgres')).default;
  const name = `sy_test_${process.pid}_${randomBytes(4).toString('hex')}`;
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
