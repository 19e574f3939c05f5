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
import { PROXY_ROUTES, STORED_RESPONSE_ROUTES, type StoredResponseRoute } from './routes';
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
  /** Serves one call; the transport creates the exchange (see ./transport). */
  serve(ex: ClientExchange, endpoint: Endpoint, path: string): void;
  /** The GET and DELETE routes on a stored response (`:id` in the path), free. */
  storedResponseRoutes: typeof STORED_RESPONSE_ROUTES;
  /** Serves a stored response's read or deletion: the route, the path's `:id` as sent and the query string. */
  serveStoredResponse(ex: ClientExchange, route: StoredResponseRoute, responseId: string, query: string): void;
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
  };
  const pipeline = new ProxyPipeline(deps);
  const realtime = new RealtimeSessions({ ...deps, settings: s });
  return {
    routes: PROXY_ROUTES,
    headerNames: PROXY_HEADERS,
    serve: (ex, endpoint, path) => pipeline.serve(ex, endpoint, path),
    storedResponseRoutes: STORED_RESPONSE_ROUTES,
    serveStoredResponse: (ex, route, responseId, query) => pipeline.serveStoredResponse(ex, route, { responseId, query }),
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
