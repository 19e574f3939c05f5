import { UpstreamClient } from '../adapters/upstream-http/client';
import type { Db } from '../adapters/storage/database';
import type { AccountCache } from '../state/accounts/account-cache';
import type { OwnerConfigStore } from '../state/owner-config/store';
import type { KeyPool } from '../state/provider-keys/key-pool';
import type { UsageSink } from '../domain/usage/types';
import type { Logger } from '../core/log';
import type { Settings } from '../core/settings';
import type { Endpoint } from './providers/types';
import { createProviderKinds } from './providers/registry';
import { AccountProfiles } from './admission/profile';
import { DatabaseBases, trackingSink } from './admission/bases';
import { MemoryAdmissionStore } from './admission/memory-store';
import type { AdmissionStore, BaseLoader, ThresholdSink } from './admission/store';
import type { AccountAlerts } from '../state/alerts/alerts';
import { KeyHealth } from './key-health/key-health';
import { SwitchOverWindows, type SwitchOver } from './key-health/switch-over';
import type { HealthBoard } from './key-health/board';
import { KeyHealthEvents } from './key-health/events';
import type { Changes } from '../state/changes/state-changes';
import { PROXY_HEADERS, ProxyPipeline } from './pipeline';
import { PROXY_ROUTES, STORED_RESPONSE_ROUTES, type PathParams, type StoredResponseRoute } from './routes';
import { FILE_ROUTES, type FileRoute } from './files/routes';
import { FileBook } from './files/file-book';
import { BATCH_HEADERS, BATCH_ROUTES, BatchPoller, type BatchRoute } from './batches/index';
import { jsonRecords, type RecordWriter } from '../state/usage/record-writers';
import { RealtimeSessions } from './realtime/session';
import type { ClientExchange } from './transport';
import type { ProxyDeps } from './call';
import { UnpricedModels } from './stages/price-policy';
import { DatabaseResponseKeys, SharedResponseKeyBook, type ResponseKeys } from '../state/response-keys/response-keys';
import { DatabaseConversations, StoredResponseBook, type StoredResponses } from '../state/stored-responses/stored-responses';
import type { ProxyTelemetry } from '../core/telemetry';

/** The proxy's routes (routes.ts): each OpenAI-format path also answers without `/v1`, as the reference does. */
export { PROXY_ROUTES, STORED_RESPONSE_ROUTES } from './routes';

export interface AiProxy {
  /** The POST routes to serve: `[path, endpoint, canonical /v1 path]`. */
  routes: typeof PROXY_ROUTES;
  /** The request headers the proxy reads; the exchange need not copy any other. */
  headerNames: readonly string[];
  /** Serves one call; the transport creates the exchange (see ./transport); `params` what a Gemini route's path and query say. */
  serve(ex: ClientExchange, endpoint: Endpoint, path: string, params?: PathParams): void;
  /** The GET and DELETE routes on a stored response (`:id` in the path), free. */
  storedResponseRoutes: typeof STORED_RESPONSE_ROUTES;
  /** Serves a stored response's read or deletion: the route, the path's `:id` as sent and the query string. */
  serveStoredResponse(ex: ClientExchange, route: StoredResponseRoute, responseId: string, query: string): void;
  /** The Files API routes (files/routes.ts): POST uploads (streamed, up to MAX_FILE_BYTES), GET and DELETE with `:id`. */
  fileRoutes: typeof FILE_ROUTES;
  /** Serves a Files API call: the route, the path's `:id` as sent ('' without one) and the query string. */
  serveFile(ex: ClientExchange, route: FileRoute, fileId: string, query: string): void;
  /** The files handed out and the keys holding them: the batch routes read a batch's input here and note its output files (`rememberFile`). */
  files: FileBook;
  /** The batch routes (batches/routes.ts): OpenAI's Batch API and Anthropic's Message Batches, `:id` the provider's batch ID. */
  batchRoutes: typeof BATCH_ROUTES;
  /** The request headers the batch routes read beyond `headerNames` (the Host the client called). */
  batchHeaderNames: readonly string[];
  /** Serves a batch route: the route, the path's `:id` as sent ('' without one) and the query string. */
  serveBatch(ex: ClientExchange, route: BatchRoute, batchId: string, query: string): void;
  /** Finds open batches' ends and bills them (BATCH_POLL_MS); tests call `poll` directly. */
  batchPoller: BatchPoller;
  /** Calls under way. */
  readonly inFlight: number;
  /** Credit reservations, spend caps and rate limits (tests read its counters). */
  admission: AdmissionStore;
  health: KeyHealth;
  switchOver: SwitchOver;
  /** Keys disabled, circuits opened, Levels switched over: subscribe to hear them (mail alerts). */
  healthEvents: KeyHealthEvents;
  /** Realtime WebSocket sessions (realtime/session.ts): the composition root hands each upgrade to `serve`. */
  realtime: Pick<RealtimeSessions, 'serve' | 'count'>;
  /** Refuses new calls, waits for those under way, then closes upstream connections. */
  close(): Promise<void>;
}

export interface ProxyBuild {
  settings: Settings;
  log: Logger;
  db: Db;
  accounts: AccountCache;
  config: OwnerConfigStore;
  pool: KeyPool;
  usage: UsageSink;
  /** Shares sleeping keys and switch-over with the other instances (REDIS_URL); per instance without it. */
  board?: HealthBoard;
  /** Tells the other instances about a key the proxy disabled (the change feed). */
  changes?: Pick<Changes, 'announce'>;
  /** Where low-balance and SoftLimit crossings go (once per period there). */
  alerts?: Pick<AccountAlerts, 'raise'>;
  /**
   * The admission store, from the database loader and the alert sink the proxy hands it: the
   * composition root's one choice between this instance's counters (the default) and shared ones.
   */
  admissionStore?: (bases: BaseLoader, onThreshold: ThresholdSink) => AdmissionStore;
  /** Which key created each stored response: shared through Redis when given, else through the database. */
  responseKeys?: ResponseKeys;
  /** Conversations answered through translation, for previous_response_id: shared through Redis when given, else through the database. */
  storedResponses?: StoredResponses;
  /** Metrics, traces and the access log (core/telemetry.ts); without it nothing is measured. */
  telemetry?: ProxyTelemetry;
  /** How usage records are written in bulk on this database (a batch's bill is written in the poller's own transaction). */
  writeRecords?: RecordWriter;
  /** Test hook: a pause between reading a batch's output and committing its bill (a kill lands there). */
  batchSettlePauseMs?: number;
  /** Test hook: a pause between the provider accepting a batch and its row taking the provider's ID (a kill lands there). */
  batchCreatePauseMs?: number;
  /** Test hook: how long a batch row stays `creating` before the poller looks for its batch (default: batches/pending.ts). */
  batchPendingGraceMs?: number;
}

/** This instance's counters: the default admission store. */
export const memoryAdmissionStore = (refreshMs: number, log: Logger) =>
  (bases: BaseLoader, onThreshold: ThresholdSink): AdmissionStore => new MemoryAdmissionStore(bases, { refreshMs, onThreshold, log });

export function createProxy(b: ProxyBuild): AiProxy {
  const s = b.settings;
  // One keep-alive pool per upstream origin, shared by every request: no per-call handshakes.
  const upstream = new UpstreamClient({
    connections: s.upstreamConnections,
    keepAliveMs: 30_000,
    connectTimeoutMs: s.upstreamConnectTimeoutMs,
  });
  const bases = new DatabaseBases(b.db, b.usage);
  const alerts = b.alerts;
  const onThreshold: ThresholdSink = (c) => {
    void alerts?.raise(c);
  };
  const admission = (b.admissionStore ?? memoryAdmissionStore(s.balanceRefreshMs, b.log))(bases, onThreshold);
  // A grant, take-back, Rates change or deletion reaches the proxy as an invalidation.
  b.accounts.onInvalidate((id) => admission.invalidate(id));
  const healthEvents = new KeyHealthEvents();
  const switchOver = new SwitchOverWindows({ threshold: s.switchOverThreshold, windowMs: s.switchOverWindowMs }, b.board, healthEvents);
  const health = new KeyHealth(b.db, b.pool, b.log, s.keySleepMs, s.keySleepMaxMs, b.board, b.changes, {
    failureThreshold: s.keyFailureThreshold,
    openMs: s.keyOpenMs,
    openMaxMs: s.keyOpenMaxMs,
    // A probe that neither answers nor fails within the longest attempt lets another request probe.
    probeTimeoutMs: Math.max(s.upstreamTimeoutMs, s.streamFirstByteTimeoutMs) + s.upstreamConnectTimeoutMs,
  }, healthEvents);
  const unpriced = new UnpricedModels(b.db, b.log);
  const responseKeys = b.responseKeys ?? new SharedResponseKeyBook(new DatabaseResponseKeys(b.db), b.log);
  // A file is paired with its key as a stored response is (files/file-book.ts).
  const files = new FileBook(b.db, responseKeys);
  const storedResponses = b.storedResponses ?? new StoredResponseBook(new DatabaseConversations(b.db), b.log, { maxBytes: s.maxBodyBytes });
  const deps: ProxyDeps = {
    settings: s,
    log: b.log,
    accounts: b.accounts,
    config: b.config,
    pool: b.pool,
    profiles: new AccountProfiles(b.db, b.accounts),
    admission,
    usage: trackingSink(b.usage, bases),
    kinds: createProviderKinds({ client: upstream, azureApiVersion: s.azureApiVersion, tokenTimeoutMs: s.upstreamConnectTimeoutMs + 20_000 }),
    health,
    switchOver,
    upstream,
    unpriced,
    responseKeys,
    storedResponses,
    telemetry: b.telemetry,
    files,
  };
  deps.batches = {
    db: b.db, settings: s, upstream, admission, pool: b.pool, kinds: deps.kinds, config: b.config, log: b.log, files,
    writeRecords: b.writeRecords ?? jsonRecords, changes: b.changes, unpriced, switchOver, pauseBeforeCommitMs: b.batchSettlePauseMs, profiles: deps.profiles,
    pauseBeforeAdoptMs: b.batchCreatePauseMs, pendingGraceMs: b.batchPendingGraceMs,
  };
  const batchPoller = new BatchPoller(deps.batches, s.batchPollMs);
  batchPoller.start();
  const pipeline = new ProxyPipeline(deps);
  const realtime = new RealtimeSessions({ ...deps, settings: s });
  return {
    routes: PROXY_ROUTES,
    headerNames: PROXY_HEADERS,
    serve: (ex, endpoint, path, params) => pipeline.serve(ex, endpoint, path, params),
    storedResponseRoutes: STORED_RESPONSE_ROUTES,
    serveStoredResponse: (ex, route, responseId, query) => pipeline.serveStoredResponse(ex, route, { responseId, query }),
    fileRoutes: FILE_ROUTES,
    serveFile: (ex, route, fileId, query) => pipeline.serveFile(ex, route, fileId, query),
    files,
    batchRoutes: BATCH_ROUTES,
    batchHeaderNames: [...PROXY_HEADERS, ...BATCH_HEADERS],
    serveBatch: (ex, route, batchId, query) => pipeline.serveBatch(ex, route, batchId, query),
    batchPoller,
    get inFlight() {
      return pipeline.inFlight;
    },
    admission,
    health,
    switchOver,
    healthEvents,
    realtime,
    async close() {
      realtime.close();
      await batchPoller.stop();
      await pipeline.close();
      await admission.drain();
      await health.settle();
      await unpriced.settle();
      await responseKeys.settle();
      await storedResponses.settle();
      await upstream.close();
    },
  };
}
