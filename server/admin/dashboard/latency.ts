import { and, between, eq, inArray } from 'drizzle-orm';
import type { Caller } from '../../../contract/services';
import type { LatencyQuery, LatencyReport } from '../../../contract/dashboard/latency-schemas';
import { addHistogram, histogramPercentile } from '../../../contract/dashboard/latency-buckets';
import type { Db } from '../../adapters/storage/database';
import { usageLatencyDaily } from '../../adapters/storage/schema';
import { eachDay, resolvePeriod } from '../billing/period';

/** Calls and their two histograms, summed over whatever rows a group gathers. */
interface Sums { requests: number; duration: number[]; firstByte: number[] }

const empty = (): Sums => ({ requests: 0, duration: [], firstByte: [] });
const fold = (into: Sums, r: { requests: number; durationBuckets: number[]; firstByteBuckets: number[] }) => {
  into.requests += r.requests;
  addHistogram(into.duration, r.durationBuckets);
  addHistogram(into.firstByte, r.firstByteBuckets);
};
const count = (h: number[]) => h.reduce((a, b) => a + b, 0);
const percentiles = (h: number[]) => ({ p50: histogramPercentile(h, 0.5), p90: histogramPercentile(h, 0.9), p99: histogramPercentile(h, 0.99) });
const summary = (s: Sums) => ({ requests: s.requests, first_byte_requests: count(s.firstByte), duration_ms: percentiles(s.duration), first_byte_ms: percentiles(s.firstByte) });
const byCalls = <T extends { requests: number }>(a: T & { name: string }, b: T & { name: string }) => b.requests - a.requests || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

function gather(groups: Map<string, Sums>, key: string) {
  let s = groups.get(key);
  if (!s) groups.set(key, (s = empty()));
  return s;
}

/**
 * A latency report from usage_latency_daily alone: the caller's own rows, and for a subtree its
 * `below` rows too, under the caller's ID only (days × models × kinds rows, whatever the
 * subtree's size; nothing outside it can be read). Percentiles come from the summed histograms.
 */
export async function readLatency(db: Db, caller: Caller, query: LatencyQuery): Promise<LatencyReport> {
  const { scope = 'own', ...dates } = query;
  const period = resolvePeriod(dates);
  const t = usageLatencyDaily;
  const rows = await db.select({
    day: t.day, model: t.model, keyKind: t.keyKind, requests: t.requests, durationBuckets: t.durationBuckets, firstByteBuckets: t.firstByteBuckets,
  }).from(t).where(and(
    eq(t.accountId, caller.id),
    scope === 'subtree' ? inArray(t.whose, ['own', 'below']) : eq(t.whose, 'own'),
    between(t.day, period.start, period.end),
  ));
  const models = new Map<string, Sums>();
  const kinds = new Map<string, Sums>();
  const days = new Map<string, Sums>();
  const total = empty();
  for (const r of rows) {
    // bigint[] arrives as numbers from one driver and as strings from the other.
    const row = { requests: Number(r.requests), durationBuckets: r.durationBuckets.map(Number), firstByteBuckets: r.firstByteBuckets.map(Number) };
    fold(gather(models, r.model), row);
    fold(gather(kinds, r.keyKind), row);
    fold(gather(days, r.day), row);
    total.requests += row.requests;
  }
  return {
    object: 'latency_report',
    scope,
    start_date: period.start,
    end_date: period.end,
    requests: total.requests,
    by_model: [...models].map(([name, s]) => ({ name, ...summary(s) })).sort(byCalls).map(({ name, ...s }) => ({ model: name, ...s })),
    by_key_kind: [...kinds].map(([name, s]) => ({ name, ...summary(s) })).sort(byCalls).map(({ name, ...s }) => ({ key_kind: name, ...s })),
    daily: eachDay(period).map((date) => {
      const s = days.get(date) ?? empty();
      return {
        date,
        timestamp: Date.parse(`${date}T00:00:00Z`) / 1000,
        requests: s.requests,
        duration_ms: { p50: histogramPercentile(s.duration, 0.5), p90: histogramPercentile(s.duration, 0.9) },
        first_byte_ms: { p50: histogramPercentile(s.firstByte, 0.5), p90: histogramPercentile(s.firstByte, 0.9) },
      };
    }),
  };
}
