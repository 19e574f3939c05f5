import { afterEach, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { createLogger } from '../../core/log';
import { DataDirInUseError, lockDataDir } from './data-dir-lock';

const dirs: string[] = [];
const fresh = () => {
  const d = mkdtempSync(path.join(tmpdir(), 'sy-lock-'));
  dirs.push(d);
  return d;
};
const logs: string[] = [];
const log = createLogger((l) => logs.push(l), 'debug');
const plant = (dir: string, holder: unknown) => {
  const lock = path.join(dir, 'switchyard.lock');
  mkdirSync(lock, { recursive: true });
  writeFileSync(path.join(lock, 'holder.json'), JSON.stringify(holder));
  // Fresh by this process's clock, as a live holder's refresh leaves it: the folder's own mtime
  // comes from the kernel's clock, which need not be the one the lock's age is read against.
  const now = new Date();
  utimesSync(lock, now, now);
};

afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  logs.length = 0;
});

describe('the DATA_DIR lock', () => {
  it('is held by one opener at a time, names its holder, and is free again once released', async () => {
    const dir = fresh();
    const release = await lockDataDir(dir, log);
    expect(JSON.parse(readFileSync(path.join(dir, 'switchyard.lock', 'holder.json'), 'utf8'))).toEqual({ pid: process.pid, host: hostname() });
    const second = await lockDataDir(dir, log).catch((e) => e);
    expect(second).toBeInstanceOf(DataDirInUseError);
    expect(second.message).toBe(`DATA_DIR ${dir} is in use by another Switchyard process (pid ${process.pid}); stop it first, or give this instance a DATA_DIR of its own (instances share data through PostgreSQL: DATABASE_URL)`);
    await release();
    expect(existsSync(path.join(dir, 'switchyard.lock'))).toBe(false);
    await (await lockDataDir(dir, log))();
  });

  it('keeps the lock fresh while held, without mistaking its own refresh for another process', async () => {
    const dir = fresh();
    const release = await lockDataDir(dir, log);
    const before = statSync(path.join(dir, 'switchyard.lock')).mtimeMs;
    await new Promise((r) => setTimeout(r, 2600));
    expect(statSync(path.join(dir, 'switchyard.lock')).mtimeMs).toBeGreaterThan(before);
    expect(logs.filter((l) => l.includes('data_dir_lock'))).toEqual([]);
    await release();
    expect(logs.filter((l) => l.includes('data_dir_unlock_failed'))).toEqual([]);
  });

  it('refuses while the recorded holder lives on this host', async () => {
    const dir = fresh();
    plant(dir, { pid: process.ppid, host: hostname() });
    const err = await lockDataDir(dir, log).catch((e) => e);
    expect(err).toBeInstanceOf(DataDirInUseError);
    expect(err.message).toContain(`(pid ${process.ppid})`);
  });

  it('takes over at once a lock left by a process that died', async () => {
    const dir = fresh();
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString();
    plant(dir, { pid: Number(dead), host: hostname() });
    const release = await lockDataDir(dir, log);
    expect(logs.some((l) => l.includes('data_dir_lock_taken_over') && l.includes(`"dead_pid":${dead}`))).toBe(true);
    await release();
  });

  it('does not guess about a holder on another host while its lock is fresh', async () => {
    const dir = fresh();
    plant(dir, { pid: 1, host: 'elsewhere.example' });
    const err = await lockDataDir(dir, log).catch((e) => e);
    expect(err).toBeInstanceOf(DataDirInUseError);
    expect(err.message).toContain('(pid 1 on elsewhere.example)');
  });
});
