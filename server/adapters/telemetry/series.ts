/**
 * Counters and histograms whose label values are bound once: recording is adding to a number
 * (no label hashing, no object per observation, unlike prom-client's own `inc`/`observe`,
 * which hash the labels on every call). prom-client formats them at scrape time through the
 * registry, as any of its metrics.
 */
import type { Registry } from 'prom-client';

type Labels = Record<string, string>;

/** One series of a counter. */
export class CounterSeries {
  value = 0;
  constructor(readonly labels: Labels) {}
}

/** One series of a histogram: per-bucket counts (cumulated at scrape), sum and count. */
export class HistogramSeries {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  constructor(readonly labels: Labels, private readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length);
  }

  observe(v: number): void {
    const b = this.bounds;
    let i = 0;
    while (i < b.length && v > b[i]) i++;
    // Above the last bound only +Inf (the count) holds it.
    if (i < b.length) this.counts[i]++;
    this.sum += v;
    this.count++;
  }
}

interface MetricValue {
  value: number;
  labels: Labels;
  metricName?: string;
}

/** What prom-client's registry asks of a metric. */
interface RegistryMetric {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  aggregator: 'sum';
  get(): Promise<{ name: string; help: string; type: string; values: MetricValue[]; aggregator: 'sum' }>;
}

export class SeriesCounter implements RegistryMetric {
  readonly type = 'counter' as const;
  readonly aggregator = 'sum' as const;
  private readonly series: CounterSeries[] = [];

  constructor(registry: Registry, readonly name: string, readonly help: string) {
    registry.registerMetric(this as never);
  }

  /** A series for these label values; keep it, and add to its `value`. */
  bind(labels: Labels): CounterSeries {
    const s = new CounterSeries(labels);
    this.series.push(s);
    return s;
  }

  async get() {
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values: this.series.map((s) => ({ value: s.value, labels: s.labels })) };
  }
}

export class SeriesHistogram implements RegistryMetric {
  readonly type = 'histogram' as const;
  readonly aggregator = 'sum' as const;
  private readonly series: HistogramSeries[] = [];

  constructor(registry: Registry, readonly name: string, readonly help: string, readonly bounds: readonly number[]) {
    registry.registerMetric(this as never);
  }

  bind(labels: Labels): HistogramSeries {
    const s = new HistogramSeries(labels, this.bounds);
    this.series.push(s);
    return s;
  }

  async get() {
    const values: MetricValue[] = [];
    for (const s of this.series) {
      let cumulative = 0;
      for (let i = 0; i < this.bounds.length; i++) {
        cumulative += s.counts[i];
        values.push({ metricName: `${this.name}_bucket`, labels: { ...s.labels, le: String(this.bounds[i]) }, value: cumulative });
      }
      values.push({ metricName: `${this.name}_bucket`, labels: { ...s.labels, le: '+Inf' }, value: s.count });
      values.push({ metricName: `${this.name}_sum`, labels: s.labels, value: s.sum });
      values.push({ metricName: `${this.name}_count`, labels: s.labels, value: s.count });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}

/**
 * Values of a label that comes from traffic (model names, Levels), bounded: the first `max`
 * distinct values get series of their own, every later one shares `other`'s.
 */
export class BoundedLabel<K, V> {
  private readonly map = new Map<K, V>();
  private otherValue: V | undefined;

  constructor(private readonly max: number, private readonly make: (label: string) => V, private readonly name: (key: K) => string) {}

  get(key: K): V {
    let v = this.map.get(key);
    if (v !== undefined) return v;
    if (this.map.size >= this.max) return (this.otherValue ??= this.make(OTHER));
    v = this.make(this.name(key));
    this.map.set(key, v);
    return v;
  }
}

/** The label value shared by the values past a label's bound. */
export const OTHER = '_other';

/** A summary without quantiles (`_sum` and `_count`), read from its source at scrape time. */
export class CollectedSummary {
  readonly type = 'summary';
  readonly aggregator = 'sum';

  constructor(registry: Registry, readonly name: string, readonly help: string, private readonly read: () => { sum: number; count: number } | undefined) {
    registry.registerMetric(this as never);
  }

  async get() {
    const v = this.read();
    const values: MetricValue[] = v
      ? [{ metricName: `${this.name}_sum`, labels: {}, value: v.sum }, { metricName: `${this.name}_count`, labels: {}, value: v.count }]
      : [];
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}
