/**
 * The proxy's Prometheus metrics (prom-client registry and exposition). Per-call figures go to
 * series bound once per label combination (series.ts), so a call costs a few map lookups and
 * additions; gauges (key states, switch-over, usage buffer, Redis) are read when scraped.
 * Label values are bounded: routes and status classes are fixed, provider names and attempt
 * outcomes are fixed sets, models and Levels come from traffic and are capped (OTHER past
 * the cap). No account ID, API key or provider key is ever a label.
 */
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import type { AttemptOutcome, ObservedCall, ProxyMetrics } from '../../core/telemetry';
import { BoundedLabel, CollectedSummary, SeriesCounter, SeriesHistogram, type CounterSeries, type HistogramSeries } from './series';

/** Whole requests and upstream calls: from a fast embedding to a long streamed answer. */
const REQUEST_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
/** The gateway's own time: tens of microseconds when all is well. */
const OVERHEAD_BUCKETS = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5];
const FIRST_TOKEN_BUCKETS = [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60];

const STATUS_CLASSES = ['other', '1xx', '2xx', '3xx', '4xx', '5xx'];
const classOf = (status: number) => (status >= 100 && status < 600 ? Math.floor(status / 100) : 0);

export interface MetricsOptions {
  /** Distinct model label values before the rest share `_other` (default 200). */
  maxModels?: number;
  /** Distinct Level label values before the rest share `_other` (default 64). */
  maxLevels?: number;
}

/** Usage recorder figures (state/usage/recorder.ts). */
export interface UsageFigures {
  buffered: number;
  inMemory: number;
  batches: number;
  batchSeconds: number;
  failedBatches: number;
}

/** What the gauges read at scrape time; wired by the composition root once the parts exist. */
export interface MetricsSources {
  inFlight?: () => number;
  keyStates?: () => Record<string, number>;
  switchedLevels?: () => ReadonlyMap<number, number>;
  usage?: () => UsageFigures;
  /** Undefined: no REDIS_URL. */
  redisUp?: () => boolean;
}

type DatabaseOperation = 'proxy' | 'readiness';

interface RouteSeries {
  /** By status class, then model label, then Level label. */
  requests: Map<string, Map<string, CounterSeries>>[];
  duration: HistogramSeries[];
  overhead: HistogramSeries;
}

interface ModelSeries {
  input: CounterSeries;
  output: CounterSeries;
  reasoning: CounterSeries;
  cached: CounterSeries;
  credit: CounterSeries;
  firstToken: HistogramSeries;
}

export class PrometheusMetrics implements ProxyMetrics {
  readonly registry = new Registry();
  private sources: MetricsSources = {};
  private readonly requests: SeriesCounter;
  private readonly duration: SeriesHistogram;
  private readonly overhead: SeriesHistogram;
  private readonly firstToken: SeriesHistogram;
  private readonly upstream: SeriesHistogram;
  private readonly tokens: SeriesCounter;
  private readonly credit: SeriesCounter;
  private readonly unitsTotal: SeriesCounter;
  private readonly unitSeries = new Map<string, CounterSeries>();
  private readonly routes = new Map<string, RouteSeries>();
  private readonly models: BoundedLabel<string, ModelSeries>;
  private readonly modelLabels: BoundedLabel<string, string>;
  private readonly levelLabels: BoundedLabel<number, string>;
  private readonly attempts = new Map<string, Map<AttemptOutcome, HistogramSeries>>();
  private readonly databaseErrors: Record<DatabaseOperation, number> = { proxy: 0, readiness: 0 };
  private redisErrors = 0;

  constructor(opts: MetricsOptions = {}) {
    const r = this.registry;
    collectDefaultMetrics({ register: r });
    this.requests = new SeriesCounter(r, 'switchyard_proxy_requests_total', 'Proxied calls by route, status class, billed model and Level');
    this.duration = new SeriesHistogram(r, 'switchyard_proxy_request_duration_seconds', 'Proxied calls from arrival to the end of the answer (a stream to its last event)', REQUEST_BUCKETS);
    this.overhead = new SeriesHistogram(r, 'switchyard_proxy_overhead_seconds', "The gateway's own time per call: everything but waiting on upstream attempts (server-timing gateway;dur)", OVERHEAD_BUCKETS);
    this.firstToken = new SeriesHistogram(r, 'switchyard_proxy_time_to_first_token_seconds', 'Streamed calls: from arrival to the first event sent to the client', FIRST_TOKEN_BUCKETS);
    this.upstream = new SeriesHistogram(r, 'switchyard_upstream_request_duration_seconds', 'Upstream attempts, from sending the request to the end of the answer, by provider and outcome', REQUEST_BUCKETS);
    this.tokens = new SeriesCounter(r, 'switchyard_tokens_total', 'Billed tokens by type (input, output, reasoning, cached) and model');
    this.credit = new SeriesCounter(r, 'switchyard_credit_used_total', 'Credit charged for proxied calls, by model');
    this.unitsTotal = new SeriesCounter(r, 'switchyard_proxy_units_total', 'Units billed by the routes not billed by tokens alone, by kind as bills show them (images, audio_seconds, characters, calls, search_units, audio_tokens), by model');
    this.modelLabels = new BoundedLabel(opts.maxModels ?? 200, (l) => l, (m) => m || 'none');
    this.levelLabels = new BoundedLabel(opts.maxLevels ?? 64, (l) => l, (n) => (n < 0 ? 'none' : String(n)));
    this.models = new BoundedLabel(opts.maxModels ?? 200, (model) => ({
      input: this.tokens.bind({ type: 'input', model }),
      output: this.tokens.bind({ type: 'output', model }),
      reasoning: this.tokens.bind({ type: 'reasoning', model }),
      cached: this.tokens.bind({ type: 'cached', model }),
      credit: this.credit.bind({ model }),
      firstToken: this.firstToken.bind({ model }),
    }), (m) => m || 'none');
    this.gauges();
  }

  /** Where the gauges read; called once the proxy, recorder and Redis link exist. */
  readFrom(sources: MetricsSources): void {
    this.sources = sources;
    const up = sources.redisUp;
    if (up && !this.registry.getSingleMetric('switchyard_redis_up')) {
      new Gauge({
        name: 'switchyard_redis_up', help: 'Whether the Redis link answers commands (1) or not (0)', registers: [this.registry],
        collect() { this.set(up() ? 1 : 0); },
      });
    }
  }

  callEnded(c: ObservedCall): void {
    const route = this.route(c.path);
    const cls = classOf(c.status);
    const byModel = route.requests[cls];
    const modelLabel = this.modelLabels.get(c.metricModel);
    let byLevel = byModel.get(modelLabel);
    if (!byLevel) byModel.set(modelLabel, (byLevel = new Map()));
    const levelLabel = this.levelLabels.get(c.metricLevel);
    let n = byLevel.get(levelLabel);
    if (!n) byLevel.set(levelLabel, (n = this.requests.bind({ route: c.path, status_class: STATUS_CLASSES[cls], model: modelLabel, level: levelLabel })));
    n.value++;
    route.duration[cls].observe(c.durationMs / 1000);
    route.overhead.observe(c.overheadMs / 1000);
    const u = c.usage;
    if (u === null && c.firstByteMs < 0) return;
    const m = this.models.get(c.metricModel);
    if (c.firstByteMs >= 0) m.firstToken.observe(c.firstByteMs / 1000);
    if (u === null) return;
    m.input.value += u.prompt;
    m.output.value += u.completion;
    m.reasoning.value += u.reasoning;
    m.cached.value += u.cached;
    m.credit.value += c.credit;
    const units = c.billedUnits;
    if (units) for (const unit in units) this.addUnits(unit, modelLabel, units[unit]);
  }

  private addUnits(unit: string, model: string, n: number): void {
    if (n <= 0) return;
    const id = `${unit}\n${model}`;
    let series = this.unitSeries.get(id);
    if (!series) this.unitSeries.set(id, (series = this.unitsTotal.bind({ unit, model })));
    series.value += n;
  }

  attemptEnded(provider: string, outcome: AttemptOutcome, seconds: number): void {
    let byOutcome = this.attempts.get(provider);
    if (!byOutcome) this.attempts.set(provider, (byOutcome = new Map()));
    let h = byOutcome.get(outcome);
    if (!h) byOutcome.set(outcome, (h = this.upstream.bind({ provider, outcome })));
    h.observe(seconds);
  }

  databaseUnavailable(): void {
    this.databaseErrors.proxy++;
  }

  /** /readyz found the database unreachable. */
  readinessFailed(): void {
    this.databaseErrors.readiness++;
  }

  /** One error event of the Redis connection (a failed command or reconnect). */
  redisError(): void {
    this.redisErrors++;
  }

  /** The exposition text and its content type. */
  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  private route(path: string): RouteSeries {
    let r = this.routes.get(path);
    if (r) return r;
    // Routes are the proxy's own fixed set: no bound needed.
    r = {
      requests: STATUS_CLASSES.map(() => new Map()),
      duration: STATUS_CLASSES.map((status_class) => this.duration.bind({ route: path, status_class })),
      overhead: this.overhead.bind({ route: path }),
    };
    this.routes.set(path, r);
    return r;
  }

  private gauges(): void {
    const r = this.registry;
    const s = () => this.sources;
    new Gauge({
      name: 'switchyard_proxy_requests_in_flight', help: 'Proxied calls under way', registers: [r],
      collect() { this.set(s().inFlight?.() ?? 0); },
    });
    new Gauge({
      name: 'switchyard_provider_keys', help: 'Enabled provider keys by state (healthy, failing, open, half-open, sleeping after a 429)', labelNames: ['state'], registers: [r],
      collect() {
        this.reset();
        for (const [state, n] of Object.entries(s().keyStates?.() ?? {})) this.set({ state }, n);
      },
    });
    new Gauge({
      name: 'switchyard_level_switched_over', help: 'Owners whose Level is switched over to its backup Level now (SWITCH_OVER)', labelNames: ['level'], registers: [r],
      collect() {
        this.reset();
        for (const [level, n] of s().switchedLevels?.() ?? []) this.set({ level: String(level) }, n);
      },
    });
    new Gauge({
      name: 'switchyard_usage_buffered_events', help: 'Usage events recorded but not yet written to the database (in memory or waiting in the journal)', registers: [r],
      collect() { this.set(s().usage?.().buffered ?? 0); },
    });
    new Gauge({
      name: 'switchyard_usage_in_memory_events', help: 'Usage events held in memory while they wait for the database', registers: [r],
      collect() { this.set(s().usage?.().inMemory ?? 0); },
    });
    new CollectedSummary(r, 'switchyard_usage_flush_duration_seconds', 'Usage batches written to the database: time per batch transaction (sum and count)', () => {
      const u = s().usage?.();
      return u && { sum: u.batchSeconds, count: u.batches };
    });
    const self = this;
    new Counter({
      name: 'switchyard_database_errors_total', help: 'Database errors by operation: proxy (a call refused 503 database_unavailable), usage_flush (a usage batch failed), readiness (/readyz)', labelNames: ['operation'], registers: [r],
      collect() {
        this.reset();
        this.inc({ operation: 'proxy' }, self.databaseErrors.proxy);
        this.inc({ operation: 'usage_flush' }, s().usage?.().failedBatches ?? 0);
        this.inc({ operation: 'readiness' }, self.databaseErrors.readiness);
      },
    });
    new Counter({
      name: 'switchyard_redis_errors_total', help: 'Errors of the Redis connection (failed commands and reconnects)', registers: [r],
      collect() {
        this.reset();
        this.inc(self.redisErrors);
      },
    });
  }
}
