import { afterAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { projectRoot } from '../core/paths';
import { openDatabase } from '../adapters/storage/database';
import { generateAccountKey } from '../adapters/security/crypto';
import { freshDatabaseUrl } from '../testing/database';
import { startMockUpstream, type MockUpstream } from '../testing/mock-upstream';
import { proxiedAccount, usageRecordCount } from '../testing/proxied-account';

/**
 * `npm start` as a container runtime or a plain `kill` stops it: SIGTERM to the npm process
 * must reach the server, which drains, flushes usage and exits, leaving nothing behind.
 *
 * It runs in a copy of the checkout (node_modules linked), so its build writes that copy's
 * dist/ and console/dist/, never the ones other test files build or serve at the same time.
 */

interface Proc { pid: number; ppid: number; state: string; cwd: string; cmdline: string }

function processes(): Proc[] {
  const out: Proc[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // The command name is in parentheses and may hold spaces: the fields follow the last ')'.
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      let cwd = '';
      try { cwd = readlinkSync(`/proc/${name}/cwd`); } catch { /* gone, or not ours */ }
      out.push({ pid: Number(name), ppid: Number(ppid), state, cwd, cmdline: readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').join(' ').trim() });
    } catch { /* exited while listed */ }
  }
  return out;
}

function descendantsOf(pid: number): Proc[] {
  const all = processes();
  const found: Proc[] = [];
  const walk = (p: number) => { for (const c of all.filter((x) => x.ppid === p)) { found.push(c); walk(c.pid); } };
  walk(pid);
  return found;
}

const alive = (pid: number) => processes().some((p) => p.pid === pid && p.state !== 'Z');

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

async function portIsFree(port: number): Promise<boolean> {
  const s = createServer();
  return new Promise((resolve) => {
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

function copyCheckout(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'sy-npm-start-'));
  for (const f of ['package.json', 'package-lock.json', 'tsconfig.json']) cpSync(path.join(projectRoot, f), path.join(dir, f));
  const skip = new Set(['dist', 'screenshots', 'node_modules'].map((d) => path.join(projectRoot, 'console', d)));
  for (const d of ['server', 'contract', 'console', 'scripts', 'openapi']) {
    cpSync(path.join(projectRoot, d), path.join(dir, d), { recursive: true, filter: (src) => !skip.has(src) });
  }
  symlinkSync(path.join(projectRoot, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  return dir;
}

/** The environment a person's shell would give `npm start`: none of this test runner's own variables. */
function cleanEnv(extra: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^(npm_|VITEST|TEST_|NODE_ENV$|NODE_OPTIONS$|MALLOC_ARENA_MAX$)/.test(k)) continue;
    env[k] = v;
  }
  for (const [k, v] of Object.entries(extra)) if (v !== undefined) env[k] = v;
  return env;
}

describe('npm start', () => {
  let checkout: string | undefined;
  let npm: ChildProcess | undefined;
  let mock: MockUpstream | undefined;
  let drop: (() => Promise<void>) | undefined;
  let tree: Proc[] = [];

  afterAll(async () => {
    for (const p of tree) if (alive(p.pid)) process.kill(p.pid, 'SIGKILL');
    if (npm && npm.exitCode === null) npm.kill('SIGKILL');
    await mock?.close();
    await drop?.();
    if (checkout) rmSync(checkout, { recursive: true, force: true });
  });

  it('passes SIGTERM to the server: the call under way finishes, its usage is written, and no process is left holding the port', async () => {
    checkout = copyCheckout();
    const dataDir = path.join(checkout, 'data');
    mkdirSync(dataDir);
    // PGlite on disk in the copy's DATA_DIR; a fresh PostgreSQL database when the suite runs on one.
    const pg = process.env.TEST_DATABASE_URL ? await freshDatabaseUrl() : undefined;
    drop = pg?.drop;
    mock = await startMockUpstream();
    const port = await freePort();
    const rootKey = generateAccountKey();
    npm = spawn('npm', ['start'], {
      cwd: checkout,
      env: cleanEnv({ HOST: '127.0.0.1', PORT: String(port), DATA_DIR: dataDir, DATABASE_URL: pg?.url, ROOT_KEY: rootKey, MASTER_KEY: pg ? 'switchyard-npm-start-master-key-0123' : undefined, SHUTDOWN_GRACE_MS: '20000' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    npm.stdout!.on('data', (d) => (out += d));
    npm.stderr!.on('data', (d) => (out += d));
    const exited = new Promise<number | null>((resolve) => npm!.on('exit', (code) => resolve(code)));
    const url = `http://127.0.0.1:${port}`;
    // The build (console and server bundle) comes first: minutes on a busy machine.
    await expect.poll(() => out.includes(`Switchyard is listening on ${url}`) || npm!.exitCode !== null, { timeout: 200_000, interval: 200 }).toBe(true);
    expect(out).toContain(`Switchyard is listening on ${url}`);

    tree = descendantsOf(npm.pid!);
    const server = tree.find((p) => /^\S*node dist\/main\.mjs$/.test(p.cmdline));
    expect(server, JSON.stringify(tree)).toBeDefined();
    // `exec`: the server is npm's own child, no shell between them to swallow the signal.
    expect(server!.ppid).toBe(npm.pid);
    // One malloc arena unless the operator chose otherwise (scripts/build/bundle.ts, bundleEnv).
    expect(readFileSync(`/proc/${server!.pid}/environ`, 'utf8').split('\0')).toContain('MALLOC_ARENA_MAX=1');

    const account = await proxiedAccount(url, rootKey, mock, 'sk-up-npmstart-00000000000');
    mock.behave('sk-up-npmstart-00000000000', { delayMs: 1500 });
    const call = account.call();
    await expect.poll(() => mock!.requests.length, { timeout: 10_000 }).toBe(1);
    npm.kill('SIGTERM');

    const answer = await call;
    expect(answer.status).toBe(200);
    expect(await exited).toBe(0);
    expect(out).toContain('"event":"shutdown","signal":"SIGTERM"');
    expect(out).toContain('"event":"stopped"');
    for (const p of tree) expect(alive(p.pid), `${p.pid} ${p.cmdline}`).toBe(false);
    expect(processes().filter((p) => p.state !== 'Z' && p.cwd.startsWith(checkout!))).toEqual([]);
    expect(await portIsFree(port)).toBe(true);

    if (pg) {
      expect(await usageRecordCount(pg.url, account.id)).toBe(1);
    } else {
      // Opening the DATA_DIR again also proves the stopped server let go of its lock.
      expect(existsSync(path.join(dataDir, 'switchyard.lock')), out).toBe(false);
      const database = await openDatabase(undefined, dataDir);
      try {
        const [{ n }] = await database.rows<{ n: number }>(sql`select count(*)::int as n from usage_records where account_id = ${account.id}`);
        expect(n).toBe(1);
      } finally {
        await database.close();
      }
    }
  }, 300_000);
});
