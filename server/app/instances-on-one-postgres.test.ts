import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import postgres from 'postgres';
import { spawnServer, type RunningServer } from '../testing/spawn';
import { freshDatabaseUrl } from '../testing/database';
import { generateAccountKey } from '../adapters/security/crypto';
import { migrationsFolder } from '../core/paths';

const journal = JSON.parse(readFileSync(path.join(migrationsFolder, 'meta', '_journal.json'), 'utf8')) as { entries: { tag: string }[] };

describe.runIf(process.env.TEST_DATABASE_URL)('several instances on one PostgreSQL', () => {
  it('start together on a fresh database: the migrations and Root are made once, and both serve', async () => {
    const { url, drop } = await freshDatabaseUrl();
    const rootKey = generateAccountKey();
    const env = { DATABASE_URL: url, ROOT_KEY: rootKey, MASTER_KEY: 'switchyard-shared-master-key-0123' };
    const started = await Promise.allSettled([spawnServer(env, 90_000), spawnServer(env, 90_000)]);
    const servers = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    try {
      expect(started.map((s) => (s.status === 'rejected' ? String(s.reason) : 'started'))).toEqual(['started', 'started']);
      for (const s of servers as RunningServer[]) {
        expect((await fetch(`${s.url}/healthz`)).status).toBe(200);
        const keys = await fetch(`${s.url}/x-keys`, { headers: { authorization: `Bearer ${rootKey}` } });
        expect(keys.status).toBe(200);
        expect(await keys.json()).toEqual([]);
        expect(s.stdout()).not.toContain('Root API key');
      }
      // Each migration applied once, and one Root, made under the lock.
      const sql = postgres(url, { max: 1, onnotice: () => {} });
      try {
        const applied = await sql<{ hash: string }[]>`select hash from drizzle.__drizzle_migrations`;
        expect(applied).toHaveLength(journal.entries.length);
        expect(new Set(applied.map((r) => r.hash)).size).toBe(journal.entries.length);
        const [{ n }] = await sql<{ n: number }[]>`select count(*)::int as n from accounts`;
        expect(n).toBe(1);
      } finally {
        await sql.end();
      }
    } finally {
      for (const s of servers) expect(await s.stop()).toBe(0);
      await drop();
    }
  }, 120_000);
});
