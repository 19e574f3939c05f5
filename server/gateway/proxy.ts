import { UpstreamClient } from '../adapters/upstream-http/client';
import type { Db } from '../adapters/storage/database';
import type { AccountCache } from '../state/accounts/account-cache';
import type { OwnerConfigStore } from '../state/owner-config/store';
import type { KeyPool } from '../state/provider-keys/key-pool';
import type { UsageSink } from '../domain/usage/types';
import type { Logger } from '../core/log';
import type { Settings } from '../core/settings';
import type { Endpoint } from './providers/types';
import type { LimitStore } from './limits/counters';
import { MemoryLimitStore } from './limits/memory-store';
import { createProviderKinds } from './providers/registry';
import { AccountProfiles } from './admission/profile';
import { Balances } from './admission/balances';
import { KeyHealth } from './key-health/key-health';
import { PROXY_HEADERS, ProxyPipeline } from './pipeline';
import type { ClientExchange } from './transport';
import type { ProxyDeps } from './call';

/** The proxy's routes: each OpenAI-format path also answers without `/v1`, as the reference does. */
export const PROXY_ROUTES: readonly [path: string, endpoint: Endpoint, canonical: string][] = [
  ['/v1/chat/completions', 'chat', '/v1/chat/completions'],
  ['/chat/completions', 'chat', '/v1/chat/completions'],
  ['/v1/responses', 'responses', '/v1/responses'],
  ['/responses', 'responses', '/v1/responses'],
  ['/v1/embeddings', 'embeddings', '/v1/embeddings'],
  ['/embeddings', 'embeddings', '/v1/embeddings'],
  ['/v1/messages', 'messages', '/v1/messages'],
  ['/messages', 'messages', '/v1/messages'],
];

export interface AiProxy {
  /** The POST routes to serve: `[path, endpoint, canonical /v1 path]`. */
  routes: typeof PROXY_ROUTES;
  /** The request headers the proxy reads; the exchange need not copy any other. */
  headerNames: readonly string[];
  /** Serves one call; the transport creates the exchange (see ./transport). */
  serve(ex: ClientExchange, endpoint: Endpoint, path: string): void;
  /** Calls under way. */
  readonly inFlight: number;
  limits: LimitStore;
  health: KeyHealth;
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
}

export function createProxy(b: ProxyBuild): AiProxy {
  const s = b.settings;
  // One keep-alive pool per upstream origin, shared by every request: no per-call handshakes.
  const upstream = new UpstreamClient({
    connections: s.upstreamConnections,
    keepAliveMs: 30_000,
    connectTimeoutMs: s.upstreamConnectTimeoutMs,
  });
  const limits = new MemoryLimitStore({ threshold: s.switchOverThreshold, windowMs: s.switchOverWindowMs });
  const health = new KeyHealth(b.db, b.pool, b.log, s.keySleepMs, s.keySleepMaxMs);
  const deps: ProxyDeps = {
    settings: s,
    log: b.log,
    accounts: b.accounts,
    config: b.config,
    pool: b.pool,
    profiles: new AccountProfiles(b.db, b.accounts),
    balances: new Balances(b.db, b.usage, s.balanceRefreshMs, b.accounts, b.log),
    limits,
    usage: b.usage,
    kinds: createProviderKinds({ client: upstream, azureApiVersion: s.azureApiVersion, tokenTimeoutMs: s.upstreamConnectTimeoutMs + 20_000 }),
    health,
    upstream,
  };
  const pipeline = new ProxyPipeline(deps);
  return {
    routes: PROXY_ROUTES,
    headerNames: PROXY_HEADERS,
    serve: (ex, endpoint, path) => pipeline.serve(ex, endpoint, path),
    get inFlight() {
      return pipeline.inFlight;
    },
    limits,
    health,
    async close() {
      await pipeline.close();
      await health.settle();
      await upstream.close();
    },
  };
}
