import { sql } from 'drizzle-orm';
import type { Db } from '../../adapters/storage/database';
import type { Logger } from '../../core/log';
import { errorFields } from '../../core/log';

/**
 * usage_records is partitioned by UTC day (migration 0005): `usage_records_pYYYYMMDD` holds
 * [day, day + 1) and `usage_records_default` catches records whose day has no partition (a
 * clock far off). Partitions are created `AHEAD_DAYS` ahead; with USAGE_RETENTION_DAYS the
 * partitions of older days are dropped whole. Rollups (usage_daily, usage_subtree_daily) are
 * never touched: bills of any period stay.
 */
export const AHEAD_DAYS = 7;
const DAY_MS = 86_400_000;
const MAINTAIN_EVERY_MS = 3_600_000;
/** Serialises maintenance across instances on one PostgreSQL (any constant both agree on). */
const LOCK_KEY = 0x5359_7573; // "SYus"

const dayName = (day: string) => `usage_records_p${day.replace(/-/g, '')}`;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

export interface MaintainResult { created: string[]; dropped: string[] }

/** Days (YYYY-MM-DD) that have a partition, oldest first. */
export async function partitionDays(db: Db): Promise<string[]> {
  const rows = await db.execute<{ name: string }>(sql`
    select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
    where i.inhparent = 'usage_records'::regclass`);
  const list = (Array.isArray(rows) ? rows : (rows as { rows: { name: string }[] }).rows) as { name: string }[];
  return list.map((r) => /^usage_records_p(\d{4})(\d{2})(\d{2})$/.exec(r.name)).filter((m): m is RegExpExecArray => m !== null)
    .map((m) => `${m[1]}-${m[2]}-${m[3]}`).sort();
}

/**
 * Creates the partitions of yesterday to `AHEAD_DAYS` ahead (moving any of their rows out of
 * the default partition first, since a partition cannot be attached over rows the default
 * holds), and, with `retentionDays` > 0, drops the partitions of days before the retained
 * period (today and the `retentionDays` − 1 days before it) and such rows of the default.
 */
export async function maintainPartitions(db: Db, retentionDays: number, now = new Date()): Promise<MaintainResult> {
  const result: MaintainResult = { created: [], dropped: [] };
  const today = Date.parse(`${dayOf(now.getTime())}T00:00:00Z`);
  await db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${LOCK_KEY})`);
    const existing = new Set(await partitionDays(tx as unknown as Db));
    for (let i = -1; i <= AHEAD_DAYS; i++) {
      const day = dayOf(today + i * DAY_MS);
      if (existing.has(day)) continue;
      if (retentionDays > 0 && today + i * DAY_MS < today - (retentionDays - 1) * DAY_MS) continue;
      const name = dayName(day);
      const lo = new Date(today + i * DAY_MS).toISOString();
      const hi = new Date(today + (i + 1) * DAY_MS).toISOString();
      await tx.execute(sql.raw(`CREATE TABLE "${name}" (LIKE "usage_records" INCLUDING DEFAULTS)`));
      await tx.execute(sql`WITH moved AS (DELETE FROM usage_records_default WHERE created_at >= ${lo}::timestamptz AND created_at < ${hi}::timestamptz RETURNING *)
        INSERT INTO ${sql.raw(`"${name}"`)} SELECT * FROM moved`);
      await tx.execute(sql.raw(`ALTER TABLE "usage_records" ATTACH PARTITION "${name}" FOR VALUES FROM ('${lo}') TO ('${hi}')`));
      result.created.push(day);
    }
    if (retentionDays > 0) {
      const first = dayOf(today - (retentionDays - 1) * DAY_MS);
      for (const day of existing) {
        if (day >= first) continue;
        await tx.execute(sql.raw(`DROP TABLE "${dayName(day)}"`));
        result.dropped.push(day);
      }
      await tx.execute(sql`DELETE FROM usage_records_default WHERE created_at < ${`${first}T00:00:00Z`}::timestamptz`);
    }
  });
  return result;
}

/** Runs maintenance now and every hour; a failure is logged and tried again on the next round. */
export class PartitionKeeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();

  constructor(private readonly db: Db, private readonly retentionDays: number, private readonly log: Logger) {}

  async start(): Promise<void> {
    await this.run();
    this.timer = setInterval(() => { this.running = this.run(); }, MAINTAIN_EVERY_MS);
    this.timer.unref();
  }

  private async run(): Promise<void> {
    try {
      const r = await maintainPartitions(this.db, this.retentionDays);
      if (r.created.length || r.dropped.length) this.log.info('usage_partitions', { created: r.created, dropped: r.dropped, retention_days: this.retentionDays || null });
    } catch (err) {
      this.log.warn('usage_partitions_failed', errorFields(err));
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }
}
