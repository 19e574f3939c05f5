import type { UpstreamClient } from '../adapters/upstream-http/client';
import type { Exchange } from '../core/http/exchange';
import type { AccountCache, AccountRow } from '../state/accounts/account-cache';
import type { OwnerConfigStore, OwnerRouting } from '../state/owner-config/store';
import type { KeyPool } from '../state/provider-keys/key-pool';
import type { LimitCheck, LimitStore } from './limits/counters';
import type { UsageSink } from '../domain/usage/types';
import type { Logger } from '../core/log';
import type { Endpoint } from './providers/types';
import type { ProviderKinds } from './providers/registry';
import type { AccountProfile, AccountProfiles } from './admission/profile';
import type { Balances } from './admission/balances';
import type { KeyHealth } from './key-health/key-health';

/** The proxy's tunables (from Settings). */
export interface ProxySettings {
  maxBodyBytes: number;
  userMinBalance: number;
  upstreamTimeoutMs: number;
  streamIdleTimeoutMs: number;
  maxAttemptsPerLevel: number;
  shutdownGraceMs: number;
}

/** What the proxy is built from: in-memory snapshots and the shared upstream connection pool. */
export interface ProxyDeps {
  settings: ProxySettings;
  log: Logger;
  accounts: AccountCache;
  config: OwnerConfigStore;
  pool: KeyPool;
  profiles: AccountProfiles;
  balances: Balances;
  limits: LimitStore;
  usage: UsageSink;
  kinds: ProviderKinds;
  health: KeyHealth;
  upstream: UpstreamClient;
}

/** One admitted client request on its way upstream. */
export interface ProxyCall {
  ex: Exchange;
  endpoint: Endpoint;
  /** The `/v1/...` path of the endpoint, whichever alias the client called. */
  path: string;
  /** The client called `/v1/messages`: errors in Anthropic's format. */
  anthropic: boolean;
  stream: boolean;
  /** The request JSON, parsed once; re-serialized only when the model or stream options change. */
  doc: Record<string, unknown>;
  raw: Buffer;
  /** The model the client asked for (the one in `raw`). */
  requestedModel: string;
  /** The last body sent upstream and its model, reused by the next attempt. */
  body?: Buffer;
  bodyModel?: string;
  /** The model after mapping: routed and billed. */
  model: string;
  level: number;
  row: AccountRow;
  profile: AccountProfile;
  owner: OwnerRouting;
  /** The limits admitted against, to add the tokens to afterwards. */
  checks: LimitCheck[];
  /** The proxy adds `stream_options.include_usage` and hides the extra usage chunk. */
  injectUsage: boolean;
}
