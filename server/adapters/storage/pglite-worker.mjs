// @ts-check
/**
 * The embedded database's thread (and, run as a script, the process creating a new database;
 * see createInChild). PGlite runs PostgreSQL compiled to WebAssembly
 * synchronously: on the proxy's thread every batch of usage records would stop all requests
 * for as long as it runs. Here it costs only this thread's time.
 *
 * Plain JavaScript on purpose: a worker thread gets no TypeScript loader, neither under the
 * test runner nor in the production bundle. The other end is `pglite-remote.ts`.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import v8 from 'node:v8';
import { PGlite } from '@electric-sql/pglite';

// V8 compiles PGlite's WebAssembly (9 MB) with its baseline compiler and recompiles a function
// with the optimizing one once it has run enough. Opening the database and the gateway's
// start-up queries made ~50 MB of optimized code (and compiler memory) an idle gateway keeps;
// a hundred times the default budget (1.8M) leaves start-up on baseline code, while what runs
// steadily (the usage writes) still gets optimized within seconds of load. The flag is
// process-wide and applies to WebAssembly compiled from now on; nothing else in the gateway
// runs WebAssembly of weight.
v8.setFlagsFromString('--wasm-tiering-budget=180000000');

const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort);

/** Open transactions by id: the PGlite transaction and how to end its callback. */
const transactions = new Map();
let nextTransaction = 1;

/** Fields of a PostgreSQL error worth sending back: callers map codes (23505…) to statuses. */
const ERROR_FIELDS = ['code', 'detail', 'hint', 'position', 'schema', 'table', 'column', 'dataType', 'constraint', 'severity', 'routine'];

function errorOf(err) {
  const out = { message: err instanceof Error ? err.message : String(err), name: err?.name ?? 'Error' };
  for (const f of ERROR_FIELDS) if (err && err[f] !== undefined) out[f] = err[f];
  return out;
}

/** The caller's parsers cannot cross threads; drizzle's are all "keep the text", rebuilt here per type OID. */
function optionsOf(msg) {
  const options = {};
  if (msg.rowMode) options.rowMode = msg.rowMode;
  if (msg.rawTypes) {
    options.parsers = {};
    for (const oid of msg.rawTypes) options.parsers[oid] = (v) => v;
  }
  if (msg.csv !== undefined) options.blob = new Blob([msg.csv]);
  return options;
}

const plain = (r) => ({ rows: r.rows, fields: r.fields, affectedRows: r.affectedRows });

function target(db, msg) {
  if (!msg.tx) return db;
  const t = transactions.get(msg.tx);
  if (!t?.tx) throw new Error('the transaction is no longer open');
  return t.tx;
}

/**
 * PostgreSQL's settings for a database one gateway uses. PGlite's defaults size it like a
 * server: its 128 MB of shared_buffers are resident from the start, while Switchyard keeps
 * its working set in its own snapshots and writes usage in batches; 16 MB hold the hot pages
 * without slowing those writes. The WAL kept after a checkpoint: for a database that lasts,
 * two segments of 16 MB, the least PostgreSQL allows; for a throwaway one (memory://), which
 * is always new and nothing reads back after a crash, segments of 1 MB (an initdb choice) and
 * 4 of them.
 */
const startParams = (throwaway) => [
  ...PGlite.defaultStartParams,
  '-c', 'shared_buffers=16MB',
  '-c', `min_wal_size=${throwaway ? 4 : 32}MB`,
  '-c', `max_wal_size=${throwaway ? 4 : 32}MB`,
];
const initDbStartParams = (throwaway) => (throwaway ? ['--wal-segsize=1'] : []);

/**
 * A single-user PostgreSQL (PGlite) has no checkpointer: nothing ends a WAL segment's life
 * but an explicit CHECKPOINT, so without one the WAL grows by everything ever written. One
 * every CHECKPOINT_MS once something was written takes ~10 ms here.
 */
const CHECKPOINT_MS = 10_000;

/**
 * A new database is created, and given the gateway's schema (the checked-in migrations), by a
 * process of its own that ends afterwards: PGlite's initdb runs a second PostgreSQL instance
 * and copies its whole heap, several hundred MB that stay referenced (PGlite keeps the instance
 * reachable) and, once freed, partly resident in the allocator's arenas; a thread that ends
 * would still leave those, and the migrations' DDL grows PostgreSQL's memory by ~20 MB more
 * that an idle gateway would keep. The database is then simply there, and the gateway's own
 * migration run finds nothing to do.
 */
async function createInChild(dataDir, throwaway, migrationsFolder) {
  await new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [fileURLToPath(import.meta.url), dataDir, throwaway ? 'throwaway' : 'lasting', migrationsFolder ?? ''], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => {
      if (err.length < 8000) err += d;
    });
    child.once('error', reject);
    child.once('exit', (code, signal) => (code === 0 ? resolve() : reject(new Error(`creating the embedded database failed (${code ?? signal}): ${err.trim().slice(-1000)}`))));
  });
}

const TEMPLATE_PREFIX = 'switchyard-memory-template-';

/**
 * What a new throwaway database is made of: PGlite's build and the migrations. Two that share
 * it would be created byte for byte alike (initdb and the same DDL), so one is copied.
 */
function templateKey(migrationsFolder) {
  const hash = createHash('sha256');
  const pglite = createRequire(import.meta.url).resolve('@electric-sql/pglite');
  const built = statSync(pglite);
  hash.update(`${pglite}\0${built.size}\0${built.mtimeMs}\0${JSON.stringify(startParams(true))}\0${initDbStartParams(true).join(' ')}\0`);
  if (migrationsFolder) {
    for (const name of readdirSync(migrationsFolder, { recursive: true }).map(String).sort()) {
      const file = path.join(migrationsFolder, name);
      if (statSync(file).isFile()) hash.update(name).update('\0').update(readFileSync(file)).update('\0');
    }
  }
  return hash.digest('hex').slice(0, 16);
}

/**
 * A throwaway database (memory://) is a copy of a template made once per PGlite build and set
 * of migrations and kept under the temporary folder: creating one runs initdb and every
 * migration in a process of its own (~3 s), copying its 30 MB takes ~0.3 s. Test suites open
 * hundreds. A template is made under a private name and renamed into place whole, so a
 * process never copies one half-made; templates of other builds or migrations are removed
 * once a day old.
 */
async function fromTemplate(dataDir, migrationsFolder) {
  const root = tmpdir();
  const name = `${TEMPLATE_PREFIX}${templateKey(migrationsFolder)}`;
  const template = path.join(root, name);
  if (!existsSync(path.join(template, 'complete'))) {
    const making = path.join(root, `${name}.${process.pid}.${Date.now()}`);
    try {
      await createInChild(making, true, migrationsFolder);
      writeFileSync(path.join(making, 'complete'), '');
      renameSync(making, template);
    } catch (err) {
      rmSync(making, { recursive: true, force: true });
      // Another process put one in place first: that one serves.
      if (!existsSync(path.join(template, 'complete'))) throw err;
    }
    // Another checkout may be copying its own right now: only templates a day old go.
    for (const other of readdirSync(root)) {
      if (!other.startsWith(TEMPLATE_PREFIX) || other === name || other.includes('.')) continue;
      const dir = path.join(root, other);
      try {
        if (Date.now() - statSync(dir).mtimeMs > 86_400_000) rmSync(dir, { recursive: true, force: true });
      } catch {
        // Removed by another process meanwhile.
      }
    }
  }
  cpSync(template, dataDir, { recursive: true, filter: (from) => path.basename(from) !== 'complete' });
}

/** The creating process: `node pglite-worker.mjs <data dir> <throwaway|lasting> <migrations folder or ''>`. */
async function createHere(dataDir, throwaway, migrationsFolder) {
  const db = await PGlite.create(dataDir, { startParams: startParams(throwaway), initDbStartParams: initDbStartParams(throwaway) });
  if (migrationsFolder) {
    const { drizzle } = await import('drizzle-orm/pglite');
    const { migrate } = await import('drizzle-orm/pglite/migrator');
    await migrate(drizzle({ client: db }), { migrationsFolder });
  }
  await db.close();
}

async function main() {
  const { dataDir, migrationsFolder, throwaway } = workerData;
  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) {
    if (throwaway) await fromTemplate(dataDir, migrationsFolder);
    else await createInChild(dataDir, throwaway, migrationsFolder);
  }
  const db = await PGlite.create(dataDir, { startParams: startParams(throwaway) });

  async function handle(msg) {
    switch (msg.op) {
      case 'query':
        return plain(await target(db, msg).query(msg.sql, msg.params, optionsOf(msg)));
      case 'exec':
        return (await target(db, msg).exec(msg.sql)).map(plain);
      case 'begin': {
        const id = nextTransaction++;
        return await new Promise((opened, failed) => {
          const entry = {};
          entry.done = db.transaction((tx) => new Promise((commit, rollback) => {
            Object.assign(entry, { tx, commit, rollback });
            opened(id);
          }));
          transactions.set(id, entry);
          // Before it opened, a failure is the caller's; after, commit or rollback reports it.
          entry.done.catch((err) => {
            if (!entry.commit) {
              transactions.delete(id);
              failed(err);
            }
          });
        });
      }
      case 'commit':
      case 'rollback': {
        const t = transactions.get(msg.tx);
        if (!t?.commit) throw new Error('the transaction is no longer open');
        if (msg.op === 'commit') t.commit();
        else t.rollback(new Error('rolled back'));
        try {
          await t.done;
        } catch (err) {
          if (msg.op === 'commit') throw err;
        } finally {
          transactions.delete(msg.tx);
        }
        return null;
      }
      case 'close':
        await db.close();
        return null;
      default:
        throw new Error(`unknown operation ${msg.op}`);
    }
  }

  let written = false;
  const checkpoints = setInterval(() => {
    // Not while a transaction of ours is open: the checkpoint would wait for its end anyway.
    if (!written || transactions.size > 0 || db.closed) return;
    written = false;
    // A failed checkpoint leaves the WAL as it was; the next tick tries again.
    db.exec('CHECKPOINT').catch(() => (written = true));
  }, CHECKPOINT_MS);
  checkpoints.unref();

  port.on('message', (msg) => {
    if (msg.op === 'close') clearInterval(checkpoints);
    else if (msg.op !== 'begin' && msg.op !== 'rollback') written = true;
    handle(msg).then(
      (result) => port.postMessage({ id: msg.id, ok: true, result }),
      (err) => port.postMessage({ id: msg.id, ok: false, error: errorOf(err) }),
    );
  });
  port.postMessage({ id: 0, ok: true, result: 'ready' });
}

if (isMainThread) {
  createHere(process.argv[2], process.argv[3] === 'throwaway', process.argv[4]).catch((err) => {
    process.stderr.write(`${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
    process.exit(1);
  });
} else {
  main().catch((err) => port.postMessage({ id: 0, ok: false, error: errorOf(err) }));
}
