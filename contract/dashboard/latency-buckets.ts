/**
 * The latency histogram's buckets, shared by the rollup's writer (state/usage), its reader
 * (admin/dashboard) and the API's description: one definition, so a stored count always means
 * the same range. Changing the bounds changes what stored rows mean: add buckets at the end only.
 *
 * Bounds are whole milliseconds √2 apart (2^(i/2) rounded, the repeated 1 dropped): 1, 2, 3,
 * 4, 6, 8, 11, 16, … 524,288, 741,455. Bucket 0 holds 0 ms, bucket k holds
 * [bound k-1, bound k), the last everything from 741,455 ms (about 12 minutes) up.
 */
export const LATENCY_BOUNDS_MS: readonly number[] = [...new Set(Array.from({ length: 40 }, (_, i) => Math.round(2 ** (i / 2))))];

/** Buckets per histogram: one below the first bound, one between each pair, one past the last. */
export const LATENCY_BUCKETS = LATENCY_BOUNDS_MS.length + 1;

const LAST_BOUND = LATENCY_BOUNDS_MS[LATENCY_BOUNDS_MS.length - 1];

/** What the API says of its estimates, from the bounds themselves. */
export const LATENCY_BUCKETS_TEXT = `Percentiles are estimates from a histogram of ${LATENCY_BUCKETS} buckets (whole milliseconds, bounds √2 apart: 1, 2, 3, 4, 6, 8, 11, 16 … ${LAST_BOUND.toLocaleString('en-US')} ms), interpolated inside the bucket that holds the percentile: exact below 4 ms, otherwise within that bucket, which is about 41% wide; from ${LAST_BOUND.toLocaleString('en-US')} ms (about ${Math.round(LAST_BOUND / 60_000)} minutes) up, the value given is that bound.`;

/** The bucket of a time in milliseconds (a fraction counts with the whole milliseconds below it). */
export function latencyBucket(ms: number): number {
  let lo = 0;
  let hi = LATENCY_BOUNDS_MS.length;
  // The first bound above ms: the bucket's index.
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (LATENCY_BOUNDS_MS[mid] <= ms) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The range [from, to) of milliseconds a bucket holds; the last has no end (`to` is its start). */
export function bucketRange(bucket: number): { from: number; to: number } {
  const from = bucket === 0 ? 0 : LATENCY_BOUNDS_MS[bucket - 1];
  return { from, to: bucket < LATENCY_BOUNDS_MS.length ? LATENCY_BOUNDS_MS[bucket] : from };
}

/**
 * The p-th percentile (0 < p ≤ 1, nearest rank: the value ranked ⌈p·n⌉ of n) estimated from
 * bucket counts: the bucket that holds that rank is exact, the place inside it is interpolated
 * by rank. Whole milliseconds, never past the bucket; null for an empty histogram.
 */
export function histogramPercentile(counts: readonly number[], p: number): number | null {
  let n = 0;
  for (const c of counts) n += c;
  if (n === 0) return null;
  const rank = Math.max(1, Math.ceil(p * n));
  let before = 0;
  for (let b = 0; b < counts.length; b++) {
    const c = counts[b];
    if (before + c >= rank) {
      const { from, to } = bucketRange(b);
      return Math.floor(from + ((to - from) * (rank - before - 0.5)) / c);
    }
    before += c;
  }
  return null;
}

/** Adds one histogram into another, element by element (the longer one's length wins). */
export function addHistogram(into: number[], from: readonly number[]): number[] {
  for (let i = 0; i < from.length; i++) into[i] = (into[i] ?? 0) + from[i];
  return into;
}
