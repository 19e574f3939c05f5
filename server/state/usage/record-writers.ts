import { sql } from 'drizzle-orm';
import type { Tx } from '../../adapters/storage/database';
import type { UsageEvent } from '../../domain/usage/types';
import type { PgliteClient } from '../../adapters/storage/pglite-remote';

/** Writes raw usage records inside the recorder's transaction; each database gets its fastest bulk path. */
export type RecordWriter = (tx: Tx, events: UsageEvent[]) => Promise<void>;

const COLUMNS = 'account_id, owner_id, model, level, key_id, endpoint, prompt, completion, reasoning, cached, credit_used, status, created_at, request_id, duration_ms, first_byte_ms, units, dropped_tools, batch_id, batch_lines, key_kind';

/**
 * PostgreSQL: one JSON document expanded by the server. A 13-column multi-row VALUES list
 * built through the query builder cost more CPU than relaying the answers did.
 */
export const jsonRecords: RecordWriter = async (tx, events) => {
  const rows = JSON.stringify(events.map((e) => ({
    a: e.accountId, o: e.ownerId, m: e.model, l: e.level, k: e.keyId, e: e.endpoint,
    p: e.prompt, c: e.completion, r: e.reasoning, h: e.cached, u: e.creditUsed, s: e.status, t: e.at.toISOString(), q: e.requestId, d: e.durationMs, b: e.firstByteMs, n: e.units, x: e.droppedTools?.join(','), i: e.batchId, j: e.batchLines, v: e.keyKind,
  })));
  await tx.execute(sql`INSERT INTO usage_records (${sql.raw(COLUMNS)})
    SELECT a, o, m, l, k, e, p, c, r, h, u, s, t, q, d, b, n, x, i, j, v
    FROM json_to_recordset(${rows}::json)
      AS x(a int, o int, m text, l int, k int, e text, p int, c int, r int, h int, u numeric, s text, t timestamptz, q text, d int, b int, n jsonb, x text, i text, j int, v text)`);
};

const csvText = (s: string) => `"${s.replace(/"/g, '""')}"`;
/** An empty unquoted CSV field is NULL. */
const csvInt = (n: number | null | undefined) => (n === null || n === undefined ? '' : String(n));

/**
 * The embedded database: COPY from an in-memory CSV blob, a third cheaper than the JSON path
 * there. drizzle has no way to pass PGlite's `blob` option, hence the transaction's client
 * (a RemotePglite one: see storage/pglite-remote.ts) directly.
 */
export const copyRecords: RecordWriter = async (tx, events) => {
  let csv = '';
  for (const e of events) {
    csv += `${e.accountId},${e.ownerId},${csvText(e.model)},${csvInt(e.level)},${csvInt(e.keyId)},${csvText(e.endpoint)},`
      + `${e.prompt},${e.completion},${e.reasoning},${e.cached},${e.creditUsed},${e.status},${e.at.toISOString()},${e.requestId === undefined ? '' : csvText(e.requestId)},${csvInt(e.durationMs)},${csvInt(e.firstByteMs)},${e.units ? csvText(JSON.stringify(e.units)) : ''},${e.droppedTools?.length ? csvText(e.droppedTools.join(',')) : ''},`
      + `${e.batchId === undefined ? '' : csvText(e.batchId)},${csvInt(e.batchLines)},${e.keyKind === undefined ? '' : csvText(e.keyKind)}\n`;
  }
  const client = (tx as unknown as { session: { client: PgliteClient } }).session.client;
  await client.copyFrom(`COPY usage_records (${COLUMNS}) FROM '/dev/blob' WITH (FORMAT csv)`, csv);
};

export const recordWriterFor = (kind: 'pglite' | 'postgres'): RecordWriter => (kind === 'pglite' ? copyRecords : jsonRecords);
