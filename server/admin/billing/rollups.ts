import { ownIdOf } from '../../domain/accounts/dna';
import { and, between, eq, sql, type AnyColumn } from 'drizzle-orm';
import type { Caller } from '../../../contract/services';
import type { Db } from '../../adapters/storage/database';
import { usageDaily, usageSubtreeDaily } from '../../adapters/storage/schema';
import type { UsageSums } from './bill';
import { addUnits, sumUnits, type UsageUnits } from '../../domain/usage/units';
import type { Period } from './period';
import { scopeCondition, type BillScope } from './user-filter';

type DayRow = UsageSums & { day: string; model: string };
const total = (column: AnyColumn) => sql<number>`coalesce(sum(${column}), 0)`.mapWith(Number);
/** A group's unit objects, summed by kind once read: SQL has no sum of jsonb objects, and a group holds few. */
export const unitsTotal = (column: AnyColumn) => sql<UsageUnits | undefined>`jsonb_agg(${column}) FILTER (WHERE ${column} IS NOT NULL)`
  .mapWith((v: unknown) => sumUnits((typeof v === 'string' ? JSON.parse(v) : v) as UsageUnits[] | null));
const unitsOf = (u: UsageUnits | null) => u ?? undefined;

/** One account's own usage per (day, model): usage_daily's primary key. */
function ownDays(db: Db, accountId: number, period: Period): Promise<DayRow[]> {
  return db.select({
    day: usageDaily.day, model: usageDaily.model,
    requests: usageDaily.requests, prompt: usageDaily.prompt, completion: usageDaily.completion,
    reasoning: usageDaily.reasoning, cached: usageDaily.cached, credit: sql<number>`${usageDaily.creditUsed}`.mapWith(Number), units: usageDaily.units,
  }).from(usageDaily).where(and(eq(usageDaily.accountId, accountId), between(usageDaily.day, period.start, period.end)))
    .then((rows) => rows.map((r) => ({ ...r, units: unitsOf(r.units) })));
}

/** An account's strict descendants per (day, model): usage_subtree_daily's primary key. */
function descendantDays(db: Db, accountId: number, period: Period): Promise<DayRow[]> {
  return db.select({
    day: usageSubtreeDaily.day, model: usageSubtreeDaily.model,
    requests: sql<number>`${usageSubtreeDaily.requests}`.mapWith(Number), prompt: usageSubtreeDaily.prompt, completion: usageSubtreeDaily.completion,
    reasoning: usageSubtreeDaily.reasoning, cached: usageSubtreeDaily.cached, credit: sql<number>`${usageSubtreeDaily.creditUsed}`.mapWith(Number), units: usageSubtreeDaily.units,
  }).from(usageSubtreeDaily).where(and(eq(usageSubtreeDaily.ancestorId, accountId), between(usageSubtreeDaily.day, period.start, period.end)))
    .then((rows) => rows.map((r) => ({ ...r, units: unitsOf(r.units) })));
}

function merge(a: DayRow[], b: DayRow[]): DayRow[] {
  const out = new Map<string, DayRow>();
  for (const r of [...a, ...b]) {
    const k = `${r.day}|${r.model}`;
    const m = out.get(k);
    if (!m) out.set(k, { ...r, units: addUnits(undefined, r.units) });
    else {
      m.requests += r.requests; m.prompt += r.prompt; m.completion += r.completion;
      m.reasoning += r.reasoning; m.cached += r.cached; m.credit += r.credit;
      m.units = addUnits(m.units, r.units);
    }
  }
  return [...out.values()];
}

/**
 * The (day, model) sums of a descendant bill. The whole tree below the caller, or a subtree
 * below it, reads days × models rows of the rollups (a subtree's root adds its own usage_daily
 * rows); one account reads its own rows. An attribute filter (L/G/R/T/F) picks accounts by
 * their current fields, which no rollup can know ahead: it sums the matching accounts' rows.
 */
export async function readBillDays(db: Db, caller: Caller, scope: BillScope, period: Period): Promise<DayRow[]> {
  switch (scope.kind) {
    case 'all': return descendantDays(db, caller.id, period);
    case 'account': return ownDays(db, scope.id, period);
    case 'subtree': {
      const id = ownIdOf(scope.dna);
      const [own, below] = await Promise.all([ownDays(db, id, period), descendantDays(db, id, period)]);
      return merge(own, below);
    }
    case 'attribute':
      return db.select({ day: usageDaily.day, model: usageDaily.model, requests: total(usageDaily.requests), prompt: total(usageDaily.prompt),
        completion: total(usageDaily.completion), reasoning: total(usageDaily.reasoning), cached: total(usageDaily.cached), credit: total(usageDaily.creditUsed), units: unitsTotal(usageDaily.units) })
        .from(usageDaily)
        .where(and(scopeCondition(caller, scope), between(usageDaily.day, period.start, period.end)))
        .groupBy(usageDaily.day, usageDaily.model);
  }
}
