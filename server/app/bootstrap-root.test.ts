import { describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawnServer } from '../testing/spawn';
import { freshDatabaseUrl } from '../testing/database';
import { startTestGateway } from '../testing/gateway';
import { KEY_PATTERN, generateAccountKey } from '../adapters/security/crypto';
import { sql } from 'drizzle-orm';

describe('bootstrap', () => {
  it('on the embedded database: generates the Root key, prints it once, and keeps data and master key across restarts', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'switchyard-'));
    try {
      const first = await spawnServer({ DATA_DIR: dataDir, DATABASE_URL: undefined, ROOT_KEY: undefined, MASTER_KEY: undefined });
      const key = /Root API key[^\n]*\n\s+(\S+)/.exec(first.stdout())?.[1];
      expect(key).toMatch(KEY_PATTERN);
      const auth = { authorization: `Bearer ${key}` };
      const created = await fetch(`${first.url}/x-keys`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ Provider: 'https://api.openai.com', SecretKey: 'sk-persisted-secret-0123456789', Status: true }) });
      expect(created.status).toBe(201);
      expect(await first.stop()).toBe(0);
      // The generated key appears only in the banner, never in the JSON log lines.
      expect(first.stdout().split('\n').filter((l) => l.startsWith('{') && l.includes(key!))).toEqual([]);
      expect(statSync(path.join(dataDir, 'master.key')).mode & 0o777).toBe(0o600);

      const second = await spawnServer({ DATA_DIR: dataDir, DATABASE_URL: undefined, ROOT_KEY: undefined, MASTER_KEY: undefined });
      try {
        expect(second.stdout()).not.toContain('Root API key');
        expect(second.stdout()).not.toContain(key!);
        const list = await fetch(`${second.url}/x-keys`, { headers: auth });
        expect(list.status).toBe(200);
        expect((await list.json())[0]).toMatchObject({ Provider: 'https://api.openai.com', SecretHint: '6789' });
      } finally {
        await second.stop();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
    // Two cold starts of the embedded database on disk (initdb, then reopening): about 15 s each on a 2-core VM.
  }, 120_000);

  it('uses ROOT_KEY when given, without printing it', async () => {
    const rootKey = generateAccountKey();
    const server = await spawnServer({ DATABASE_URL: 'memory://', ROOT_KEY: rootKey });
    try {
      expect(server.stdout()).not.toContain(rootKey);
      expect((await fetch(`${server.url}/x-config`, { headers: { authorization: `Bearer ${rootKey}` } })).status).toBe(200);
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });

  it('refuses bad settings with a clear message', async () => {
    await expect(spawnServer({ TENANCY: 'both' })).rejects.toThrow(/TENANCY must be "single" or "multi"/);
    await expect(spawnServer({ DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/postgres', MASTER_KEY: undefined })).rejects.toThrow(/MASTER_KEY is required with PostgreSQL/);
  });

  it.runIf(process.env.TEST_DATABASE_URL)('lets a second instance start beside the first on one PostgreSQL', async () => {
    const { url, drop } = await freshDatabaseUrl();
    const rootKey = generateAccountKey();
    try {
      const [a, b] = await Promise.all([startTestGateway({ databaseUrl: url, rootKey }), startTestGateway({ databaseUrl: url, rootKey })]);
      try {
        const roots = await a.gateway.database.rows<{ n: number }>(sql`select count(*)::int as n from accounts`);
        expect(roots[0].n).toBe(1);
        const created = await a.root.post('/x-keys', { Provider: 'https://api.openai.com', SecretKey: 'sk-shared-secret-0123456789' });
        expect(created.status).toBe(201);
        expect((await b.root.get('/x-keys')).body).toHaveLength(1);
      } finally {
        await a.close();
        await b.close();
      }
    } finally {
      await drop();
    }
  });
});
