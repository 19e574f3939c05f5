import { Worker } from 'node:worker_threads';
import path from 'node:path';
import { projectRoot } from '../../core/paths';
import { makeThrowawayDir, type ThrowawayDir } from './throwaway-dir';

const workerFile = path.join(projectRoot, 'server', 'adapters', 'storage', 'pglite-worker.mjs');

interface QueryOptions {
  rowMode?: 'array' | 'object';
  parsers?: Record<string, unknown>;
}

interface Results {
  rows: unknown[];
  fields: { name: string; dataTypeID: number }[];
  affectedRows?: number;
}

/** A PostgreSQL error from the database thread, with its code, constraint and detail kept. */
export class EmbeddedDatabaseError extends Error {
  code?: string;
  detail?: string;
  constraint?: string;
  constructor(fields: Record<string, unknown>) {
    super(String(fields.message));
    Object.assign(this, fields);
    this.name = String(fields.name ?? 'Error');
  }
}

/** What drizzle's PGlite driver calls on a client and on a transaction's client, plus COPY from text. */
export interface PgliteClient {
  query(sql: string, params?: unknown[], options?: QueryOptions): Promise<Results>;
  exec(sql: string): Promise<Results[]>;
  /** `COPY … FROM '/dev/blob'` fed with `csv`. */
  copyFrom(sql: string, csv: string): Promise<void>;
}

type Pending = { resolve: (v: any) => void; reject: (e: Error) => void };

/**
 * PGlite on its own thread (see pglite-worker.mjs) behind the client surface drizzle's PGlite
 * driver uses. PGlite still runs one statement at a time, so a statement sent outside an
 * open transaction waits for it to end, exactly as in-process.
 */
export class RemotePglite implements PgliteClient {
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private failure: Error | null = null;

  private constructor(dataDir: string, migrationsFolder: string | undefined, private readonly throwaway: ThrowawayDir | undefined) {
    this.worker = new Worker(workerFile, { workerData: { dataDir, migrationsFolder, throwaway: throwaway !== undefined } });
    this.worker.on('message', (m: { id: number; ok: boolean; result?: unknown; error?: Record<string, unknown> }) => {
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (m.ok) p.resolve(m.result);
      else p.reject(new EmbeddedDatabaseError(m.error ?? { message: 'unknown database error' }));
    });
    const fail = (err: Error) => {
      this.failure ??= err;
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
    };
    const stopped = (message: string) => Object.assign(new Error(message), { code: 'EMBEDDED_DATABASE_STOPPED' });
    this.worker.on('error', (err) => fail(stopped(`the embedded database stopped: ${err.message}`)));
    this.worker.on('exit', (code) => fail(stopped(`the embedded database stopped (exit ${code})`)));
  }

  /**
   * Starts the database thread and waits until PGlite opened its data directory (undefined: a
   * throwaway database, in a private temporary folder removed when it closes); a new database
   * is created with `migrationsFolder`'s migrations already applied.
   */
  static async create(dataDir: string | undefined, migrationsFolder?: string): Promise<RemotePglite> {
    const throwaway = dataDir === undefined ? makeThrowawayDir() : undefined;
    const db = new RemotePglite(throwaway?.path ?? dataDir!, migrationsFolder, throwaway);
    try {
      await new Promise((resolve, reject) => db.pending.set(0, { resolve, reject }));
    } catch (err) {
      // The thread answers nothing more once its start failed: it is stopped, not asked to close.
      await db.worker.terminate();
      throwaway?.remove();
      throw err;
    }
    return db;
  }

  private call<T>(msg: Record<string, unknown>): Promise<T> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ ...msg, id });
    });
  }

  query(sql: string, params?: unknown[], options?: QueryOptions, tx?: number): Promise<Results> {
    return this.call({
      op: 'query', sql, params, tx,
      rowMode: options?.rowMode,
      rawTypes: options?.parsers ? Object.keys(options.parsers).map(Number) : undefined,
    });
  }

  exec(sql: string, tx?: number): Promise<Results[]> {
    return this.call({ op: 'exec', sql, tx });
  }

  async copyFrom(sql: string, csv: string, tx?: number): Promise<void> {
    await this.call({ op: 'query', sql, params: [], csv, tx });
  }

  async transaction<T>(fn: (tx: PgliteClient) => Promise<T>): Promise<T> {
    const tx = await this.call<number>({ op: 'begin' });
    const client: PgliteClient = {
      query: (sql, params, options) => this.query(sql, params, options, tx),
      exec: (sql) => this.exec(sql, tx),
      copyFrom: (sql, csv) => this.copyFrom(sql, csv, tx),
    };
    let result: T;
    try {
      result = await fn(client);
    } catch (err) {
      await this.call({ op: 'rollback', tx }).catch(() => undefined);
      throw err;
    }
    await this.call({ op: 'commit', tx });
    return result;
  }

  async close(): Promise<void> {
    if (!this.failure) await this.call({ op: 'close' }).catch(() => undefined);
    await this.worker.terminate();
    this.throwaway?.remove();
  }
}
