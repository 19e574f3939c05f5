import { sql } from 'drizzle-orm';
import type { Database } from '../../../server/adapters/storage/database';

/** The tables an admin request may write, each as row count and a digest of every row. */
export const FINGERPRINTED = ['accounts', 'account_keys', 'provider_keys', 'owner_configs', 'news', 'credit_grants'] as const;

export interface Fingerprint {
  tables: Record<(typeof FINGERPRINTED)[number], string>;
  /** Operation-log entries, and the newest one's action. */
  oplog: number;
  lastAction: string | null;
}

const QUERY = sql.raw(`select ${FINGERPRINTED.map((t) =>
  `(select count(*)::text || ':' || coalesce(md5(string_agg(r::text, '|' order by r::text)), '') from ${t} r) as ${t}`).join(', ')},
  (select count(*)::int from operation_logs) as oplog,
  (select action from operation_logs order by id desc limit 1) as last_action`);

/** One round trip: cheap enough to take around every write the fuzzer sends. */
export async function fingerprint(database: Database): Promise<Fingerprint> {
  const [row] = await database.rows<Record<string, unknown>>(QUERY);
  const tables = Object.fromEntries(FINGERPRINTED.map((t) => [t, String(row[t])])) as Fingerprint['tables'];
  return { tables, oplog: Number(row.oplog), lastAction: (row.last_action as string | null) ?? null };
}

/** The tables whose rows differ between two fingerprints. */
export function changedTables(a: Fingerprint, b: Fingerprint): string[] {
  return FINGERPRINTED.filter((t) => a.tables[t] !== b.tables[t]);
}
