// @ts-check
/**
 * The embedded database's thread. PGlite runs PostgreSQL compiled to WebAssembly
 * synchronously: on the proxy's thread every batch of usage records would stop all requests
 * for as long as it runs. Here it costs only this thread's time.
 *
 * Plain JavaScript on purpose: a worker thread gets no TypeScript loader, neither under the
 * test runner nor in the production bundle. The other end is `pglite-remote.ts`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';

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

async function main() {
  const db = await PGlite.create(workerData.dataDir);

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

  port.on('message', (msg) => {
    handle(msg).then(
      (result) => port.postMessage({ id: msg.id, ok: true, result }),
      (err) => port.postMessage({ id: msg.id, ok: false, error: errorOf(err) }),
    );
  });
  port.postMessage({ id: 0, ok: true, result: 'ready' });
}

main().catch((err) => port.postMessage({ id: 0, ok: false, error: errorOf(err) }));
