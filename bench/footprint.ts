/**
 * Footprint: the resident memory of an idle Switchyard, as `npm start` runs it (the built
 * dist/main.mjs on plain node), on each database it supports:
 *
 *   - PostgreSQL: a fresh database on BENCH_POSTGRES_URL (an admin connection; default
 *     postgres://postgres@127.0.0.1:5432/postgres), dropped afterwards;
 *   - throwaway PGlite (DATABASE_URL=memory://: a private temporary folder);
 *   - on-disk PGlite in a fresh DATA_DIR (the first start creates the database), then
 *     started again on the same DATA_DIR (the database exists: what a restart costs).
 *
 * Each gateway is started alone, left until its RSS stops moving (idle: no request after the
 * start), and its /proc figures printed; nothing is measured while another one runs.
 *
 *   npm run bench:footprint
 *
 * Ends with one line: `idle rss: postgres X MB, pglite memory Y MB, pglite disk Z MB (restart W MB)`.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { generateAccountKey } from '../server/adapters/security/crypto';
import { bundleEnv, bundleServer } from '../scripts/build/bundle';
import { freshDatabaseUrl } from '../server/testing/database';
import { runBenchmark, startChild, stopAll, type Child } from './proxy/children';

const POSTGRES_ADMIN = process.env.BENCH_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
/** Idle: RSS within this many MB over the settle window. */
const STILL_MB = 1;
const SETTLE_MS = 5000;
const MAX_WAIT_MS = 60_000;

interface Memory {
  rss: number;
  anon: number;
  file: number;
  /** Peak RSS since the start (VmHWM). */
  peak: number;
}

const MB = (kb: number) => kb / 1024;

/** The process's memory from /proc/<pid>/status, in MB; null once it is gone. */
function memoryOf(pid: number): Memory | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN);
    return { rss: MB(kb('VmRSS')), anon: MB(kb('RssAnon')), file: MB(kb('RssFile')), peak: MB(kb('VmHWM')) };
  } catch {
    return null;
  }
}

/** Waits until RSS has stayed within STILL_MB for SETTLE_MS (or MAX_WAIT_MS passed). */
async function idleMemory(child: Child): Promise<{ memory: Memory; waitedMs: number }> {
  const pid = child.proc.pid!;
  const started = Date.now();
  const window: number[] = [];
  for (;;) {
    await new Promise((r) => setTimeout(r, 250));
    const m = memoryOf(pid);
    if (!m) throw new Error(`${child.name} exited while idle:\n${child.output().slice(-2000)}`);
    window.push(m.rss);
    if (window.length > SETTLE_MS / 250) window.shift();
    const still = window.length === SETTLE_MS / 250 && Math.max(...window) - Math.min(...window) <= STILL_MB;
    if (still || Date.now() - started > MAX_WAIT_MS) return { memory: m, waitedMs: Date.now() - started };
  }
}

async function measure(name: string, bundle: string, env: Record<string, string>): Promise<Memory> {
  const started = Date.now();
  const child = await startChild(name, [bundle], {
    PORT: '0', HOST: '127.0.0.1', ROOT_KEY: generateAccountKey(), LOG_LEVEL: 'warn', NODE_ENV: 'production', ...bundleEnv(), ...env,
  }, /Switchyard is listening on (http:\/\/\S+)/);
  const readyMs = Date.now() - started;
  try {
    const { memory: m, waitedMs } = await idleMemory(child);
    console.log(`${name.padEnd(26)} ${m.rss.toFixed(0).padStart(6)} MB   anon ${m.anon.toFixed(0).padStart(5)}   file ${m.file.toFixed(0).padStart(4)}   peak ${m.peak.toFixed(0).padStart(5)} MB   (ready in ${readyMs} ms, idle after ${(waitedMs / 1000).toFixed(1)} s)`);
    return m;
  } finally {
    // A clean stop, so the on-disk database is closed before the restart opens it.
    await stopAll(30_000);
  }
}

async function main(): Promise<void> {
  console.log('footprint: idle resident memory of the built gateway (dist/main.mjs on plain node), one database at a time');
  const bundle = await bundleServer();
  const dataDir = mkdtempSync(path.join(tmpdir(), 'sy-footprint-'));
  process.once('exit', () => rmSync(dataDir, { recursive: true, force: true }));
  const fmt = (m: Memory | null) => (m ? m.rss.toFixed(0) : 'n/a');

  let postgres: Memory | null = null;
  const fresh = await freshDatabaseUrl(POSTGRES_ADMIN, 'sy_footprint').catch((err: Error) => err);
  if (fresh instanceof Error) {
    console.log(`PostgreSQL                 not measured: ${fresh.message.split('\n')[0]}`);
  } else {
    try {
      postgres = await measure('PostgreSQL', bundle, { DATABASE_URL: fresh.url, MASTER_KEY: 'footprint-master-key-0123456789' });
    } finally {
      await fresh.drop();
    }
  }
  const memory = await measure('PGlite memory://', bundle, { DATABASE_URL: 'memory://' });
  const disk = await measure('PGlite on disk, new', bundle, { DATA_DIR: dataDir });
  const restart = await measure('PGlite on disk, restart', bundle, { DATA_DIR: dataDir });
  console.log('(anon: heap, WebAssembly memory and other private pages; file: mapped files such as node and native modules)');
  console.log(`idle rss: postgres ${fmt(postgres)} MB, pglite memory ${fmt(memory)} MB, pglite disk ${fmt(disk)} MB (restart ${fmt(restart)} MB)`);
}

runBenchmark('footprint', main, 'idle rss: postgres n/a MB, pglite memory n/a MB, pglite disk n/a MB (restart n/a MB)');
