import path from 'node:path';

export type Tenancy = 'single' | 'multi';

export interface Settings {
  port: number;
  host: string;
  /** undefined: embedded PGlite under dataDir; `memory://`: a throwaway PGlite in a private temporary folder; `postgres://…`: PostgreSQL. */
  databaseUrl?: string;
  dataDir: string;
  rootKey?: string;
  tenancy: Tenancy;
  redisUrl?: string;
  /** Prepended to every Redis key and channel, so deployments (and tests) can share one Redis. */
  redisPrefix: string;
  masterKey?: string;
  /** Minimum balance an account needs to be created with and to call the proxy. */
  userMinBalance: number;
  /** Minimum balance an account needs for manage permission. */
  userApiBalance: number;
  /** Default api-version for cloud-hosted deployments without their own. */
  azureApiVersion: string;
  /** Start even when uWebSockets.js fell back to its slow JavaScript server. */
  allowUwsFallback: boolean;
  maxBodyBytes: number;
  /** A realtime session with no frame either way for this long is closed. */
  realtimeIdleMs: number;
  /** The longest a realtime session may last. */
  realtimeMaxSessionMs: number;
  /** Largest multipart upload (audio transcriptions, image edits), streamed upstream rather than read whole (413 above). */
  maxUploadBytes: number;
  /** Largest file uploaded to POST /v1/files (OpenAI's batch input limit by default), streamed upstream as it arrives (413 above). */
  maxFileBytes: number;
  // AI proxy
  /** Longest wait for an upstream's response headers. */
  upstreamTimeoutMs: number;
  upstreamConnectTimeoutMs: number;
  /** A stream (or body) that sends nothing for this long is cut and counts as abnormal. */
  streamIdleTimeoutMs: number;
  /** Longest wait for a streamed request's response head and first body bytes (the next key is tried after it). */
  streamFirstByteTimeoutMs: number;
  /** No further provider key is tried once a call has spent this long on failed attempts. */
  failoverBudgetMs: number;
  /** Consecutive failures (connection errors, timeouts, 5xx) that take a key, or a model on it, out of rotation. */
  keyFailureThreshold: number;
  /** First cool-down of a key out of rotation; doubled each time it fails its probe, up to keyOpenMaxMs. */
  keyOpenMs: number;
  keyOpenMaxMs: number;
  /** Keep-alive connections per upstream origin. */
  upstreamConnections: number;
  /** Most keys tried per Level before the request drifts to the next Level (every healthy key, up to this many). */
  maxAttemptsPerLevel: number;
  /** Cooldown of a key after an upstream 429 without Retry-After, and the most any Retry-After may impose. */
  keySleepMs: number;
  keySleepMaxMs: number;
  /** SWITCH_OVER: more than `switchOverThreshold` abnormal results within `switchOverWindowMs`. */
  switchOverThreshold: number;
  switchOverWindowMs: number;
  /** How often an in-memory balance is re-read from the ledger in the background. */
  balanceRefreshMs: number;
  /** BATCH_POLL_MS: how often each instance asks the providers about open batches (to find their end and bill them). */
  batchPollMs: number;
  /** How long shutdown waits for proxied requests under way. */
  shutdownGraceMs: number;
  /** USAGE_RETENTION_DAYS: raw usage records older than this many days are dropped by partition (0 keeps them). */
  usageRetentionDays: number;
  // Observability
  /** METRICS: `on` (/metrics open on a loopback listener, METRICS_TOKEN otherwise), `open` (to anyone), `off` (not measured at all). */
  metrics: 'on' | 'open' | 'off';
  /** METRICS_TOKEN: the bearer token /metrics asks for (whatever the listener). */
  metricsToken?: string;
  /** ACCESS_LOG: an `info` line per proxied call. */
  accessLog: 'on' | 'off';
  /** OTEL_EXPORTER_OTLP_ENDPOINT: traces are exported over OTLP/HTTP to `<endpoint>/v1/traces`; unset, no tracing. */
  otelExporterOtlpEndpoint?: string;
  otelServiceName: string;
}

export class SettingsError extends Error {}

function int(name: string, raw: string | undefined, fallback: number, min: number, max: number): number {
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new SettingsError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  return n;
}

function oneOf<T extends string>(name: string, raw: string | undefined, values: readonly T[], fallback: T): T {
  if (raw === undefined || raw === '') return fallback;
  if (!(values as readonly string[]).includes(raw)) throw new SettingsError(`${name} must be ${values.map((v) => `"${v}"`).join(', ')}, got "${raw}"`);
  return raw as T;
}

function money(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new SettingsError(`${name} must be a non-negative number, got "${raw}"`);
  return n;
}

export function readSettings(env: NodeJS.ProcessEnv = process.env): Settings {
  const tenancy = env.TENANCY || 'single';
  if (tenancy !== 'single' && tenancy !== 'multi') throw new SettingsError(`TENANCY must be "single" or "multi", got "${tenancy}"`);
  const databaseUrl = env.DATABASE_URL || undefined;
  if (databaseUrl && databaseUrl !== 'memory://' && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new SettingsError('DATABASE_URL must be unset, memory:// or a postgres:// URL');
  }
  if (databaseUrl?.startsWith('postgres') && !env.MASTER_KEY) {
    throw new SettingsError('MASTER_KEY is required with PostgreSQL: every instance must share it to read provider keys');
  }
  if (env.MASTER_KEY !== undefined && env.MASTER_KEY.length < 16) throw new SettingsError('MASTER_KEY must be at least 16 characters');
  if (env.METRICS_TOKEN && env.METRICS_TOKEN.length < 16) throw new SettingsError('METRICS_TOKEN must be at least 16 characters');
  const otlp = env.OTEL_EXPORTER_OTLP_ENDPOINT || undefined;
  if (otlp !== undefined && !/^https?:\/\/[^\s]+$/.test(otlp)) throw new SettingsError('OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// URL');
  return {
    port: int('PORT', env.PORT, 8080, 0, 65535),
    host: env.HOST || '127.0.0.1',
    databaseUrl,
    dataDir: path.resolve(env.DATA_DIR || './data'),
    rootKey: env.ROOT_KEY || undefined,
    tenancy,
    redisUrl: env.REDIS_URL || undefined,
    redisPrefix: env.REDIS_PREFIX || 'switchyard:',
    masterKey: env.MASTER_KEY || undefined,
    userMinBalance: money('USER_MIN_BALANCE', env.USER_MIN_BALANCE, 2),
    userApiBalance: money('USER_API_BALANCE', env.USER_API_BALANCE, 20),
    azureApiVersion: env.AZURE_API_VERSION || '2024-10-21',
    allowUwsFallback: env.ALLOW_UWS_FALLBACK === '1' || env.ALLOW_UWS_FALLBACK === 'true',
    maxBodyBytes: int('MAX_BODY_BYTES', env.MAX_BODY_BYTES, 4 * 1024 * 1024, 1024, 256 * 1024 * 1024),
    realtimeIdleMs: int('REALTIME_IDLE_MS', env.REALTIME_IDLE_MS, 300_000, 1000, 86_400_000),
    realtimeMaxSessionMs: int('REALTIME_MAX_SESSION_MS', env.REALTIME_MAX_SESSION_MS, 3_600_000, 1000, 86_400_000),
    maxUploadBytes: int('MAX_UPLOAD_BYTES', env.MAX_UPLOAD_BYTES, 64 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    maxFileBytes: int('MAX_FILE_BYTES', env.MAX_FILE_BYTES, 200 * 1024 * 1024, 1024, 8 * 1024 * 1024 * 1024),
    upstreamTimeoutMs: int('UPSTREAM_TIMEOUT_MS', env.UPSTREAM_TIMEOUT_MS, 300_000, 100, 3_600_000),
    upstreamConnectTimeoutMs: int('UPSTREAM_CONNECT_TIMEOUT_MS', env.UPSTREAM_CONNECT_TIMEOUT_MS, 10_000, 100, 600_000),
    streamIdleTimeoutMs: int('STREAM_IDLE_TIMEOUT_MS', env.STREAM_IDLE_TIMEOUT_MS, 60_000, 100, 3_600_000),
    upstreamConnections: int('UPSTREAM_CONNECTIONS', env.UPSTREAM_CONNECTIONS, 256, 1, 65_536),
    streamFirstByteTimeoutMs: int('STREAM_FIRST_BYTE_TIMEOUT_MS', env.STREAM_FIRST_BYTE_TIMEOUT_MS, 30_000, 100, 3_600_000),
    // Unset: long enough for a whole request that timed out to still fail over once.
    failoverBudgetMs: int('FAILOVER_BUDGET_MS', env.FAILOVER_BUDGET_MS, int('UPSTREAM_TIMEOUT_MS', env.UPSTREAM_TIMEOUT_MS, 300_000, 100, 3_600_000) + 30_000, 100, 7_200_000),
    keyFailureThreshold: int('KEY_FAILURE_THRESHOLD', env.KEY_FAILURE_THRESHOLD, 3, 1, 1000),
    keyOpenMs: int('KEY_OPEN_MS', env.KEY_OPEN_MS, 15_000, 100, 86_400_000),
    keyOpenMaxMs: int('KEY_OPEN_MAX_MS', env.KEY_OPEN_MAX_MS, 600_000, 100, 7 * 86_400_000),
    maxAttemptsPerLevel: int('MAX_ATTEMPTS_PER_LEVEL', env.MAX_ATTEMPTS_PER_LEVEL, 10, 1, 100),
    keySleepMs: int('KEY_SLEEP_MS', env.KEY_SLEEP_MS, 60_000, 100, 86_400_000),
    keySleepMaxMs: int('KEY_SLEEP_MAX_MS', env.KEY_SLEEP_MAX_MS, 86_400_000, 1000, 7 * 86_400_000),
    switchOverThreshold: int('SWITCH_OVER_THRESHOLD', env.SWITCH_OVER_THRESHOLD, 5, 0, 1_000_000),
    switchOverWindowMs: int('SWITCH_OVER_WINDOW_MS', env.SWITCH_OVER_WINDOW_MS, 60_000, 100, 86_400_000),
    balanceRefreshMs: int('BALANCE_REFRESH_MS', env.BALANCE_REFRESH_MS, 30_000, 100, 86_400_000),
    batchPollMs: int('BATCH_POLL_MS', env.BATCH_POLL_MS, 60_000, 50, 86_400_000),
    shutdownGraceMs: int('SHUTDOWN_GRACE_MS', env.SHUTDOWN_GRACE_MS, 30_000, 0, 600_000),
    usageRetentionDays: int('USAGE_RETENTION_DAYS', env.USAGE_RETENTION_DAYS, 0, 0, 36_500),
    metrics: oneOf('METRICS', env.METRICS, ['on', 'open', 'off'], 'on'),
    metricsToken: env.METRICS_TOKEN || undefined,
    accessLog: oneOf('ACCESS_LOG', env.ACCESS_LOG, ['on', 'off'], 'on'),
    otelExporterOtlpEndpoint: otlp,
    otelServiceName: env.OTEL_SERVICE_NAME || 'switchyard',
  };
}
