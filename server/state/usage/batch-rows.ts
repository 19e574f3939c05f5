import type { UsageEvent } from '../../domain/usage/types';
import { ancestorIdsOf } from '../../domain/accounts/dna';
import { addUnits, sanitizeUnits, type UsageUnits } from '../../domain/usage/units';
import { rollupModel } from '../../domain/usage/batch-usage';
import { LATENCY_BUCKETS, latencyBucket } from '../../../contract/dashboard/latency-buckets';

/**
 * What one batch of usage events becomes in the database, as pure functions of the events: the
 * charges per account, the usage_daily rows and the usage_subtree_daily rows, and each event
 * brought into the columns' ranges when it is recorded.
 */

const INT_MAX = 2_147_483_647;

/**
 * Root and Owners are not charged: they bring the provider keys their usage runs on.
 * Their ownerId is their own ID, so the event alone tells, without a database read.
 */
export const isCharged = (e: Pick<UsageEvent, 'accountId' | 'ownerId'>) => e.accountId !== e.ownerId;

const DAY_MS = 86_400_000;
let lastDay = { n: NaN, text: '' };
/** Every event of a batch falls on one or two days: the day's text is made once, not per event. */
export function utcDay(at: Date): string {
  const n = Math.floor(at.getTime() / DAY_MS);
  if (n !== lastDay.n) lastDay = { n, text: at.toISOString().slice(0, 10) };
  return lastDay.text;
}

export interface DailyKey { accountId: number; day: string; model: string }
export interface Daily extends DailyKey {
  ownerId: number; dna: string; requests: number; prompt: number; completion: number; reasoning: number; cached: number; creditUsed: number;
  units?: UsageUnits;
}

export function chargesOf(batch: UsageEvent[]): Map<number, number> {
  const out = new Map<number, number>();
  for (const e of batch) if (isCharged(e) && e.creditUsed > 0) out.set(e.accountId, (out.get(e.accountId) ?? 0) + e.creditUsed);
  return out;
}

/** One row per (account, UTC day, model), sorted by key so concurrent upserts lock in one order. */
export function aggregate(batch: UsageEvent[]): Daily[] {
  const byKey = new Map<string, Daily>();
  for (const e of batch) {
    const day = utcDay(e.at);
    // A provider batch's usage keeps rows of its own (`gpt-4o (batch)`): bills show it apart from calls.
    const model = rollupModel(e.model, e.batchId);
    const k = `${e.accountId}|${day}|${model}`;
    let d = byKey.get(k);
    if (!d) byKey.set(k, (d = { accountId: e.accountId, day, model, ownerId: e.ownerId, dna: e.dna, requests: 0, prompt: 0, completion: 0, reasoning: 0, cached: 0, creditUsed: 0 }));
    // A provider batch's one record stands for its lines: each is a request in the rollups.
    d.requests += e.batchLines ?? 1;
    d.prompt += e.prompt;
    d.completion += e.completion;
    d.reasoning += e.reasoning;
    d.cached += e.cached;
    d.creditUsed += e.creditUsed;
    if (e.units) d.units = addUnits(d.units, e.units);
    d.dna = e.dna;
  }
  return [...byKey.values()].sort((a, b) => a.accountId - b.accountId || (a.day < b.day ? -1 : a.day > b.day ? 1 : 0) || (a.model < b.model ? -1 : a.model > b.model ? 1 : 0));
}

/** usage_subtree_daily rows of a batch: each daily row added to every ancestor's, sorted by key. */
export function subtreeRollups(daily: Daily[]): (Omit<Daily, 'accountId' | 'ownerId' | 'dna'> & { ancestorId: number })[] {
  const byKey = new Map<string, Omit<Daily, 'accountId' | 'ownerId' | 'dna'> & { ancestorId: number }>();
  for (const d of daily) {
    for (const ancestorId of ancestorIdsOf(d.dna)) {
      const k = `${ancestorId}|${d.day}|${d.model}`;
      let r = byKey.get(k);
      if (!r) byKey.set(k, (r = { ancestorId, day: d.day, model: d.model, requests: 0, prompt: 0, completion: 0, reasoning: 0, cached: 0, creditUsed: 0 }));
      r.requests += d.requests;
      r.prompt += d.prompt;
      r.completion += d.completion;
      r.reasoning += d.reasoning;
      r.cached += d.cached;
      r.creditUsed += d.creditUsed;
      if (d.units) r.units = addUnits(r.units, d.units);
    }
  }
  return [...byKey.values()].sort((a, b) => a.ancestorId - b.ancestorId || (a.day < b.day ? -1 : a.day > b.day ? 1 : 0) || (a.model < b.model ? -1 : a.model > b.model ? 1 : 0));
}

/** A usage_latency_daily row: one account's own calls or its strict descendants', per day, model and key kind. */
export interface LatencyRow {
  accountId: number; whose: 'own' | 'below'; day: string; model: string; keyKind: string;
  requests: number; durationBuckets: number[]; firstByteBuckets: number[];
}

/** The kind recorded for an event whose key's kind is not known (journal lines from before it was kept). */
export const UNKNOWN_KEY_KIND = 'unknown';

/**
 * usage_latency_daily rows of a batch, sorted by key: each call with a duration counted in its
 * account's own row and in every ancestor's `below` row (the ancestors it had when recorded, as
 * usage_subtree_daily). A call without a first byte (not streamed) counts for duration only;
 * one without a duration (a provider batch's record) is no call's latency and is left out.
 */
export function latencyRollups(batch: UsageEvent[]): LatencyRow[] {
  // Each call once into its account's own row; the few own rows then into their ancestors'.
  const own = new Map<string, LatencyRow & { dna: string }>();
  for (const e of batch) {
    if (typeof e.durationMs !== 'number' || !(e.durationMs >= 0)) continue;
    const day = utcDay(e.at);
    const model = rollupModel(e.model, e.batchId);
    const keyKind = e.keyKind || UNKNOWN_KEY_KIND;
    const k = `${e.accountId}|${day}|${keyKind}|${model}`;
    let r = own.get(k);
    if (!r) own.set(k, (r = { accountId: e.accountId, whose: 'own', day, model, keyKind, requests: 0, durationBuckets: zeros(), firstByteBuckets: zeros(), dna: e.dna }));
    r.requests++;
    r.durationBuckets[latencyBucket(e.durationMs)]++;
    if (typeof e.firstByteMs === 'number' && e.firstByteMs >= 0) r.firstByteBuckets[latencyBucket(e.firstByteMs)]++;
    r.dna = e.dna;
  }
  const rows = new Map<string, LatencyRow>();
  for (const { dna, ...r } of own.values()) {
    rows.set(`${r.accountId}|own|${r.day}|${r.keyKind}|${r.model}`, r);
    for (const ancestorId of ancestorIdsOf(dna)) {
      const k = `${ancestorId}|below|${r.day}|${r.keyKind}|${r.model}`;
      let b = rows.get(k);
      if (!b) rows.set(k, (b = { accountId: ancestorId, whose: 'below', day: r.day, model: r.model, keyKind: r.keyKind, requests: 0, durationBuckets: zeros(), firstByteBuckets: zeros() }));
      b.requests += r.requests;
      for (let i = 0; i < LATENCY_BUCKETS; i++) {
        b.durationBuckets[i] += r.durationBuckets[i];
        b.firstByteBuckets[i] += r.firstByteBuckets[i];
      }
    }
  }
  const order = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return [...rows.values()].sort((a, b) => a.accountId - b.accountId || order(a.whose, b.whose) || order(a.day, b.day) || order(a.model, b.model) || order(a.keyKind, b.keyKind));
}

const zeros = () => new Array<number>(LATENCY_BUCKETS).fill(0);

/** PostgreSQL text cannot hold NUL: one such model name would fail every batch it joined. */
const text = (s: string | undefined, max: number) => {
  if (s === undefined) return '';
  const clean = s.includes('\0') ? s.replace(/\0/g, '') : s;
  return clean.length > max ? clean.slice(0, max) : clean;
};

/** A time in whole milliseconds within int4, or absent. */
const millis = (n: unknown) => (typeof n === 'number' && Number.isFinite(n) && n >= 0 ? Math.min(Math.round(n), INT_MAX) : undefined);

/** Dropped tool names as the record keeps them: names without commas (the column joins them with one), at most 20. */
function droppedTools(v: unknown): string[] | undefined {
  if (!Array.isArray(v)) return undefined;
  const names = v.filter((n): n is string => typeof n === 'string' && n !== '').slice(0, 20).map((n) => text(n.replace(/,/g, ''), 128)).filter(Boolean);
  return names.length ? names : undefined;
}

const count = (n: unknown) => (typeof n === 'number' && Number.isFinite(n) && n > 0 ? Math.min(Math.floor(n), INT_MAX) : 0);

/**
 * One malformed event must not block every batch after it (a token count past int4, a NaN
 * cost), so values are brought into the columns' ranges when recorded.
 */
export function sanitize(e: UsageEvent, makeRequestId: () => string): UsageEvent {
  return {
    accountId: e.accountId,
    ownerId: e.ownerId,
    dna: e.dna ?? '',
    model: text(e.model, 200) || 'unknown',
    level: Number.isInteger(e.level) && Math.abs(e.level!) <= INT_MAX ? e.level : null,
    keyId: Number.isInteger(e.keyId) && Math.abs(e.keyId!) <= INT_MAX ? e.keyId : null,
    ...(typeof e.keyKind === 'string' && e.keyKind ? { keyKind: text(e.keyKind, 40) } : {}),
    endpoint: text(e.endpoint, 200),
    prompt: count(e.prompt),
    completion: count(e.completion),
    reasoning: count(e.reasoning),
    cached: count(e.cached),
    creditUsed: typeof e.creditUsed === 'number' && Number.isFinite(e.creditUsed) && e.creditUsed > 0 ? e.creditUsed : 0,
    status: e.status === 'abnormal' ? 'abnormal' : 'ok',
    at: e.at instanceof Date && !Number.isNaN(e.at.getTime()) ? e.at : new Date(),
    requestId: typeof e.requestId === 'string' && e.requestId ? text(e.requestId, 200) : makeRequestId(),
    durationMs: millis(e.durationMs),
    firstByteMs: millis(e.firstByteMs),
    units: e.units === undefined ? undefined : sanitizeUnits(e.units),
    droppedTools: droppedTools(e.droppedTools),
    ...(typeof e.batchId === 'string' && e.batchId ? { batchId: text(e.batchId, 200), batchLines: count(e.batchLines) } : {}),
  };
}
