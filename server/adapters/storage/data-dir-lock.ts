import fs, { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import lockfile from 'proper-lockfile';
import type { Logger } from '../../core/log';
import { processRuns } from '../../core/processes';

/**
 * One Switchyard process per DATA_DIR: two processes opening one embedded database each
 * believe they own it, hand out the same IDs, and one's writes are silently lost.
 *
 * The lock is proper-lockfile's (an atomic mkdir of DATA_DIR/switchyard.lock whose mtime the
 * holder refreshes; a lock left unrefreshed for STALE_MS is taken over). The folder is made
 * with the holder's pid and host inside, so a second start names the process in the way, and
 * a lock left by a process that died on this host is taken over at once rather than after
 * STALE_MS. (Two starts taking over one dead lock at the same instant can still both win, as
 * with proper-lockfile's own take-over; a restart is one process.)
 */
export class DataDirInUseError extends Error {
  constructor(readonly dataDir: string, readonly holder: Holder | undefined) {
    const who = holder ? ` (pid ${holder.pid}${holder.host === hostname() ? '' : ` on ${holder.host}`})` : '';
    super(`DATA_DIR ${shown(dataDir)} is in use by another Switchyard process${who}; stop it first, or give this instance a DATA_DIR of its own (instances share data through PostgreSQL: DATABASE_URL)`);
  }
}

interface Holder { pid: number; host: string }

const LOCK = 'switchyard.lock';
const HOLDER = 'holder.json';
const STALE_MS = 10_000;
const UPDATE_MS = 2_000;

/** DATA_DIRs this process holds: the same pid in a holder file is then not a leftover of an earlier life. */
const held = new Set<string>();

export async function lockDataDir(dataDir: string, log: Logger): Promise<() => Promise<void>> {
  const dir = path.resolve(dataDir);
  mkdirSync(dir, { recursive: true });
  const lockPath = path.join(dir, LOCK);
  const holderPath = path.join(lockPath, HOLDER);
  const holder = readHolder(holderPath);
  if (holder && !held.has(dir) && isLeftover(holder)) {
    log.warn('data_dir_lock_taken_over', { data_dir: dir, dead_pid: holder.pid });
    rmSync(lockPath, { recursive: true, force: true });
  }
  let release: () => Promise<void>;
  try {
    release = await lockfile.lock(dir, {
      lockfilePath: lockPath,
      realpath: false,
      stale: STALE_MS,
      update: UPDATE_MS,
      // The lock is a folder that holds the holder file: release and take-over remove both.
      fs: lockFs(),
      // proper-lockfile throws from a timer by default, which would kill the process with
      // usage still buffered; the data stays consistent as long as this process is the one writing.
      onCompromised: (err) => log.error('data_dir_lock_lost', { data_dir: dir, error: err.message }),
    });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOCKED') throw new DataDirInUseError(dataDir, readHolder(holderPath));
    throw err;
  }
  held.add(dir);
  return async () => {
    held.delete(dir);
    await release().catch((err) => log.warn('data_dir_unlock_failed', { data_dir: dir, error: (err as Error).message }));
  };
}

function readHolder(file: string): Holder | undefined {
  try {
    const h = JSON.parse(readFileSync(file, 'utf8')) as Holder;
    return Number.isInteger(h.pid) && typeof h.host === 'string' ? h : undefined;
  } catch {
    // No holder file: the lock was just taken and is being written, or never had one.
    return undefined;
  }
}

/** A lock whose holder is gone: a dead pid on this host, or our own pid from before a restart (containers reuse pid 1). */
function isLeftover(h: Holder): boolean {
  if (h.host !== hostname()) return false;
  return h.pid === process.pid || !processRuns(h.pid);
}

type Callback = (err: NodeJS.ErrnoException | null) => void;

/**
 * The file system proper-lockfile locks through: the holder file is written as part of making
 * the folder (before proper-lockfile records the folder's mtime; a write afterwards would
 * change it and read as another process's refresh), and removed with it.
 */
let fsForLock: typeof fs | undefined;
function lockFs(): typeof fs {
  const me = JSON.stringify({ pid: process.pid, host: hostname() } satisfies Holder);
  fsForLock ??= {
    ...fs,
    mkdir: ((p: string, cb: Callback) => fs.mkdir(p, (err) => {
      if (err) return cb(err);
      fs.writeFile(path.join(p, HOLDER), me, (werr) => (werr ? fs.rm(p, { recursive: true, force: true }, () => cb(werr)) : cb(null)));
    })) as typeof fs.mkdir,
    rmdir: ((p: string, cb: Callback) => fs.rm(path.join(p, HOLDER), { force: true }, () => fs.rmdir(p, cb))) as typeof fs.rmdir,
  };
  return fsForLock;
}

/** `./data` for a folder under the working directory, the absolute path otherwise. */
function shown(dir: string): string {
  const rel = path.relative(process.cwd(), dir);
  return rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? `./${rel}` : dir;
}
