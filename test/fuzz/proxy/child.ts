import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawnServer, type RunningServer } from '../../../server/testing/spawn';
import { freshDatabaseUrl } from '../../../server/testing/database';
import { openDatabase, type Database } from '../../../server/adapters/storage/database';
import { generateAccountKey } from '../../../server/adapters/security/crypto';
import type { Keys } from './routes';

export const MAX_BODY_BYTES = 256 * 1024;
/**
 * Shorter than the 30 s default: every call has ended when the fuzzer stops the gateway, so
 * SIGTERM must finish at once, and a call wrongly still counted shows as a stop taking the
 * whole grace; 10 s tells the two apart without a failing run waiting 30 s.
 */
export const SHUTDOWN_GRACE_MS = 10_000;
const MASTER_KEY = 'switchyard-fuzz-master-key-0123456789';

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** What the fuzzer had under way when the process went away. */
  underWay: string[];
  stderr: string;
}

/**
 * The gateway as a child process, so a request that crashes it is a finding (with the
 * requests under way at the time) instead of the end of the test run. A crashed gateway is
 * started again on the same database and the fuzzing goes on.
 */
export class ChildGateway {
  server!: RunningServer;
  readonly exits: Exit[] = [];
  readonly rootKey = generateAccountKey();
  private underWay = new Map<number, string>();
  /** The last requests answered: a crash may come just after the answer that caused it. */
  private recent: string[] = [];
  private serial = 0;
  private restarting: Promise<void> | null = null;
  private stopping = false;

  private constructor(private readonly env: Record<string, string | undefined>, private readonly cleanup: () => Promise<void>, readonly dataDir: string, readonly databaseUrl: string | undefined) {}

  static async start(): Promise<ChildGateway> {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'switchyard-fuzz-'));
    // PGlite in a data directory (so the test can read it after the process stops), or a fresh PostgreSQL database.
    const db = process.env.TEST_DATABASE_URL ? await freshDatabaseUrl() : { url: undefined, drop: async () => {} };
    const g = new ChildGateway({
      DATA_DIR: dataDir, DATABASE_URL: db.url, MASTER_KEY, MAX_BODY_BYTES: String(MAX_BODY_BYTES), LOG_LEVEL: 'warn', SHUTDOWN_GRACE_MS: String(SHUTDOWN_GRACE_MS),
    }, async () => { await db.drop(); rmSync(dataDir, { recursive: true, force: true }); }, dataDir, db.url);
    await g.launch();
    return g;
  }

  get url(): string {
    return this.server.url;
  }

  get port(): number {
    return Number(new URL(this.server.url).port);
  }

  get alive(): boolean {
    return this.server.child.exitCode === null && this.server.child.signalCode === null;
  }

  private async launch(): Promise<void> {
    this.server = await spawnServer({ ...this.env, ROOT_KEY: this.rootKey }, 120_000);
    const child = this.server.child;
    child.once('exit', (code, signal) => {
      if (this.stopping) return;
      this.exits.push({ code, signal, underWay: [...this.underWay.values(), '--- finished just before:', ...this.recent.slice().reverse()], stderr: this.server.stderr().slice(-2000) || this.server.stdout().slice(-2000) });
      this.restarting = this.launch().finally(() => { this.restarting = null; });
    });
  }

  /** Resolves once a crashed gateway is serving again (at once when it never crashed). */
  async ready(): Promise<void> {
    while (this.restarting) await this.restarting;
  }

  track(description: string): () => void {
    const id = ++this.serial;
    this.underWay.set(id, description);
    return () => {
      this.underWay.delete(id);
      this.recent.push(description);
      if (this.recent.length > 8) this.recent.shift();
    };
  }

  /** SIGTERM, as an orchestrator stops it; resolves with the exit code and how long it took. */
  async stop(): Promise<{ code: number | null; ms: number }> {
    await this.ready();
    this.stopping = true;
    const t0 = Date.now();
    const code = await this.server.stop('SIGTERM');
    return { code, ms: Date.now() - t0 };
  }

  /** The stopped gateway's database, to check what it wrote. */
  openDatabase(): Promise<Database> {
    return openDatabase(this.databaseUrl, this.dataDir);
  }

  async dispose(): Promise<void> {
    this.stopping = true;
    if (this.server && this.alive) await this.server.stop('SIGKILL');
    await this.cleanup();
  }
}

/** The provider key and the accounts the proxy fuzzer calls with, made through the admin API. */
export async function provision(g: ChildGateway, mockUrl: string, upstreamSecret: string): Promise<Keys> {
  const call = async (method: string, p: string, body: unknown) => {
    const r = await fetch(g.url + p, { method, headers: { authorization: `Bearer ${g.rootKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const text = await r.text();
    if (r.status >= 300) throw new Error(`set-up: ${method} ${p} answered ${r.status}: ${text}`);
    return JSON.parse(text);
  };
  await call('POST', '/x-keys', { Name: 'mock', Level: 1, Provider: mockUrl, SecretKey: upstreamSecret, Status: true });
  // Generated model names are mostly unknown to the price table: billed at a fallback price, a
  // valid call is served (and billed) rather than refused as unpriced.
  await call('PUT', '/x-config', { UNPRICED_MODEL_POLICY: 'bill:1,1' });
  const user = async (name: string, extra: Record<string, unknown>) =>
    (await call('POST', '/x-users', { Name: name, Email: `${name}@fuzz.test`, CreditGranted: 5, ...extra })).User.SecretKey as string;
  const funded = await user('proxyfuzz', { CreditGranted: 1_000_000 });
  const disabled = await user('pfdisabled', { Status: false });
  const suspended = await user('pfsuspended', { Suspended: true });
  const poor = await user('pfpoor', { CreditGranted: 2.5 });
  // Below USER_MIN_BALANCE (2): the proxy answers 402.
  await call('PUT', '/x-users/pfpoor', { CreditGranted: -1 });
  return { root: g.rootKey, funded, disabled, suspended, poor };
}
