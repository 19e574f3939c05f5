import { sql, type AnyColumn } from 'drizzle-orm';
import type { Tx } from '../../adapters/storage/database';
import { usageBatches, usageDaily, usageLatencyDaily, usageSubtreeDaily } from '../../adapters/storage/schema';
import type { Logger } from '../../core/log';
import type { UsageEvent } from '../../domain/usage/types';
import { deductCredit } from '../credits/ledger';
import { aggregate, chargesOf, latencyRollups, subtreeRollups, type Daily } from './batch-rows';
import type { RecordWriter } from './record-writers';

/** usage_daily takes 12 parameters a row; PostgreSQL allows 65,535 per statement. */
const ROWS_PER_INSERT = 4000;
/** Raw records travel as one document (JSON or CSV): the bound is its size, not a parameter count. */
const RECORDS_PER_INSERT = 10_000;
/** usage_latency_daily takes 8 parameters a row (each histogram is one). */
const LATENCY_ROWS_PER_INSERT = 4000;

/** A rollup row met again adds the batch's counts to what it held. */
const summed = (t: typeof usageDaily | typeof usageSubtreeDaily) => ({
  requests: sql`${t.requests} + excluded.requests`,
  prompt: sql`${t.prompt} + excluded.prompt`,
  completion: sql`${t.completion} + excluded.completion`,
  reasoning: sql`${t.reasoning} + excluded.reasoning`,
  cached: sql`${t.cached} + excluded.cached`,
  creditUsed: sql`${t.creditUsed} + excluded.credit_used`,
  // Units by kind: each kind's quantities added, a kind only one side has kept as it is.
  units: sql`CASE WHEN ${t.units} IS NULL THEN excluded.units WHEN excluded.units IS NULL THEN ${t.units}
    ELSE (SELECT jsonb_object_agg(key, total) FROM (SELECT key, sum(value::numeric) AS total
      FROM (SELECT * FROM jsonb_each_text(${t.units}) UNION ALL SELECT * FROM jsonb_each_text(excluded.units)) AS pair GROUP BY key) AS kinds) END`,
});

/**
 * One batch of usage in its transaction: the batch's ID (a retry of a batch whose commit went
 * through finds it and writes nothing twice), the raw records, the daily and subtree rollups
 * bills read, the latency rollup /dashboard/latency reads, and the credit deductions.
 */
export async function writeBatch(tx: Tx, { id, events: batch }: { id: string; events: UsageEvent[] }, writeRecords: RecordWriter, log: Pick<Logger, 'warn'>): Promise<void> {
  const fresh = await tx.insert(usageBatches).values({ id }).onConflictDoNothing().returning({ id: usageBatches.id });
  if (fresh.length === 0) {
    // Committed by an earlier attempt whose answer was lost: everything below is in already.
    log.warn('usage_batch_already_written', { batch: id, events: batch.length });
    return;
  }
  for (let i = 0; i < batch.length; i += RECORDS_PER_INSERT) await writeRecords(tx, batch.slice(i, i + RECORDS_PER_INSERT));
  const daily = aggregate(batch);
  for (let i = 0; i < daily.length; i += ROWS_PER_INSERT) {
    await tx.insert(usageDaily).values(daily.slice(i, i + ROWS_PER_INSERT)).onConflictDoUpdate({
      target: [usageDaily.accountId, usageDaily.day, usageDaily.model],
      set: { dna: sql`excluded.dna`, ...summed(usageDaily) },
    });
  }
  await writeSubtreeRollups(tx, daily);
  await writeLatencyRollups(tx, batch);
  // Ascending account order, so two instances flushing at once lock cards in the same order.
  for (const [accountId, amount] of [...chargesOf(batch)].sort((a, b) => a[0] - b[0])) {
    await deductCredit(tx, accountId, amount);
  }
}

async function writeSubtreeRollups(tx: Tx, daily: Daily[]): Promise<void> {
  const rows = subtreeRollups(daily);
  for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) {
    await tx.insert(usageSubtreeDaily).values(rows.slice(i, i + ROWS_PER_INSERT)).onConflictDoUpdate({
      target: [usageSubtreeDaily.ancestorId, usageSubtreeDaily.day, usageSubtreeDaily.model],
      set: summed(usageSubtreeDaily),
    });
  }
}

/**
 * Histograms met again add up bucket by bucket. WITH ORDINALITY keeps the buckets' order; a
 * shorter array (rows written before buckets were added at the end) counts zero past its end.
 */
const bucketsAdded = (column: AnyColumn, excluded: string) => sql`ARRAY(SELECT coalesce(a, 0) + coalesce(b, 0)
  FROM unnest(${column}, ${sql.raw(`excluded.${excluded}`)}) WITH ORDINALITY AS bucket(a, b, i) ORDER BY i)`;

async function writeLatencyRollups(tx: Tx, batch: UsageEvent[]): Promise<void> {
  const rows = latencyRollups(batch);
  const t = usageLatencyDaily;
  for (let i = 0; i < rows.length; i += LATENCY_ROWS_PER_INSERT) {
    await tx.insert(t).values(rows.slice(i, i + LATENCY_ROWS_PER_INSERT)).onConflictDoUpdate({
      target: [t.accountId, t.whose, t.day, t.model, t.keyKind],
      set: {
        requests: sql`${t.requests} + excluded.requests`,
        durationBuckets: bucketsAdded(t.durationBuckets, 'duration_buckets'),
        firstByteBuckets: bucketsAdded(t.firstByteBuckets, 'first_byte_buckets'),
      },
    });
  }
}
