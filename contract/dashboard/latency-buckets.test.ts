import { describe, expect, it } from 'vitest';
import { bucketRange, histogramPercentile, LATENCY_BOUNDS_MS, LATENCY_BUCKETS, LATENCY_BUCKETS_TEXT, latencyBucket } from './latency-buckets';

describe('latency buckets', () => {
  it('are 40, from 1 ms to about 12 minutes, each bound about √2 past the one before', () => {
    expect(LATENCY_BUCKETS).toBe(40);
    expect(LATENCY_BOUNDS_MS.slice(0, 8)).toEqual([1, 2, 3, 4, 6, 8, 11, 16]);
    expect(LATENCY_BOUNDS_MS.at(-1)).toBe(741_455);
    for (let i = 8; i < LATENCY_BOUNDS_MS.length; i++) expect(LATENCY_BOUNDS_MS[i] / LATENCY_BOUNDS_MS[i - 1]).toBeCloseTo(Math.SQRT2, 1);
    expect(LATENCY_BUCKETS_TEXT).toContain('741,455 ms');
  });

  it('put a time in the bucket whose range holds it', () => {
    expect(latencyBucket(0)).toBe(0);
    expect(latencyBucket(0.9)).toBe(0);
    expect(latencyBucket(1)).toBe(1);
    expect(latencyBucket(5)).toBe(4);
    expect(latencyBucket(6)).toBe(5);
    expect(latencyBucket(741_454)).toBe(38);
    expect(latencyBucket(741_455)).toBe(39);
    expect(latencyBucket(1e12)).toBe(39);
    for (const ms of [0, 1, 7, 100, 999, 12_345, 600_000, 2_000_000]) {
      const { from, to } = bucketRange(latencyBucket(ms));
      expect(ms >= from && (ms < to || latencyBucket(ms) === LATENCY_BUCKETS - 1), `${ms}`).toBe(true);
    }
  });

  it('estimate a percentile inside the bucket that holds its rank', () => {
    const h = new Array(LATENCY_BUCKETS).fill(0);
    expect(histogramPercentile(h, 0.5)).toBeNull();
    // 100 calls of 3 ms, 100 of 100 ms: the median is the 100th value (3 ms, exact: a 1 ms wide bucket).
    h[latencyBucket(3)] = 100;
    h[latencyBucket(100)] = 100;
    expect(histogramPercentile(h, 0.5)).toBe(3);
    const p90 = histogramPercentile(h, 0.9)!;
    expect(latencyBucket(p90)).toBe(latencyBucket(100));
    // Past the last bound the estimate is that bound.
    h[LATENCY_BUCKETS - 1] = 10_000;
    expect(histogramPercentile(h, 0.99)).toBe(741_455);
  });
});
