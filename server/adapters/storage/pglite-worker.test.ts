import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { migrationsFolder } from '../../core/paths';
import { RemotePglite } from './pglite-remote';

const setting = async (db: RemotePglite, name: string) => ((await db.query(`select current_setting('${name}') as v`)).rows[0] as { v: string }).v;
const walBytes = async (db: RemotePglite) => Number(((await db.query('select coalesce(sum(size), 0)::bigint as n from pg_ls_waldir()')).rows[0] as { n: string }).n);

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('the embedded database sized for one gateway (pglite-worker.mjs)', () => {
  it('throwaway (memory://): 16 MB of shared buffers, 1 MB WAL segments, the WAL cut back by the periodic checkpoint, and its folder gone once closed', async () => {
    const ours = () => readdirSync(tmpdir()).filter((n) => n.startsWith(`switchyard-memory-${process.pid}-`)).map((n) => path.join(tmpdir(), n));
    const before = ours();
    const db = await RemotePglite.create(undefined);
    const [folder] = ours().filter((d) => !before.includes(d));
    expect(existsSync(path.join(folder, 'PG_VERSION'))).toBe(true);
    try {
      expect(await setting(db, 'shared_buffers')).toBe('16MB');
      expect(await setting(db, 'wal_segment_size')).toBe('1MB');
      await db.exec('create table w (id int, note text)');
      // About 25 MB of WAL: far past the 4 MB kept, until a checkpoint ends the old segments.
      await db.exec(`insert into w select g, repeat(md5(g::text), 4) from generate_series(1, 120000) g`);
      const written = await walBytes(db);
      expect(written).toBeGreaterThan(12 * 1024 * 1024);
      const deadline = Date.now() + 25_000;
      let now = written;
      while (now > 6 * 1024 * 1024 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 500));
        now = await walBytes(db);
      }
      expect(now).toBeLessThanOrEqual(6 * 1024 * 1024);
      expect(((await db.query('select count(*)::int as n from w')).rows[0] as { n: number }).n).toBe(120000);
    } finally {
      await db.close();
    }
    expect(existsSync(folder)).toBe(false);
  }, 60_000);

  it('on disk: a new data directory is created (by a process of its own) and opened again with its data', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sy-pglite-worker-'));
    dirs.push(dir);
    const first = await RemotePglite.create(dir);
    try {
      expect(existsSync(path.join(dir, 'PG_VERSION'))).toBe(true);
      expect(await setting(first, 'shared_buffers')).toBe('16MB');
      expect(await setting(first, 'wal_segment_size')).toBe('16MB');
      await first.exec(`create table kept (note text); insert into kept values ('still here')`);
    } finally {
      await first.close();
    }
    const again = await RemotePglite.create(dir);
    try {
      expect((await again.query('select note from kept')).rows).toEqual([{ note: 'still here' }]);
    } finally {
      await again.close();
    }
  }, 60_000);

  it('a new database comes up with the migrations applied by the creating process, lasting and throwaway', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sy-pglite-migrated-'));
    dirs.push(dir);
    const journal = JSON.parse(readFileSync(path.join(migrationsFolder, 'meta', '_journal.json'), 'utf8')) as { entries: unknown[] };
    for (const where of [dir, undefined]) {
      const db = await RemotePglite.create(where, migrationsFolder);
      try {
        const applied = (await db.query('select count(*)::int as n from drizzle.__drizzle_migrations')).rows[0] as { n: number };
        expect(applied.n).toBe(journal.entries.length);
        expect((await db.query(`select to_regclass('public.accounts') is not null as present`)).rows).toEqual([{ present: true }]);
      } finally {
        await db.close();
      }
    }
  }, 60_000);
});
