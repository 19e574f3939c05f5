import type { UpstreamClient } from '../adapters/upstream-http/client';
import type { ClientExchange } from './transport';
import type { AccountCache, AccountRow } from '../state/accounts/account-cache';
import type { OwnerConfigStore, OwnerRouting } from '../state/owner-config/store';
import type { KeyPool, PooledKey } from '../state/provider-keys/key-pool';
import type { LimitCheck, LimitStore } from './limits/counters';
import type { UsageSink } from '../domain/usage/types';
import type { Logger } from '../core/log';
import type { Endpoint } from './providers/types';
import type { ProviderKinds } from './providers/registry';
import type { AccountProfile, AccountProfiles } from './admission/profile';
import type { OwnerRules } from './admission/owner-rules';
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

/**
 * One client request on its way through the stages, and what each stage found out. It is
 * the only object the pipeline allocates per call; every field exists from the start, so
 * its shape never changes as the stages fill it in.
 */
export class ProxyCall {
  /** The client called `/v1/messages`: errors in Anthropic's format. */
  readonly anthropic: boolean;

  // authenticate
  row: AccountRow = undefined!;
  profile: AccountProfile = undefined!;
  owner: OwnerRouting = undefined!;
  /** The Owner's RESOURCES and MODEL_LIMITS, parsed once per Owner configuration. */
  ownerRules: OwnerRules = undefined!;

  // read body
  raw: Buffer = undefined!;
  /** The request JSON, parsed once; re-serialized only when the model or stream options change. */
  doc: Record<string, unknown> = undefined!;
  /** The model the client asked for (the one in `raw`). */
  requestedModel = '';
  stream = false;
  /** The proxy adds `stream_options.include_usage` and hides the extra usage chunk. */
  injectUsage = false;

  // map model
  /** The model after mapping: routed and billed. */
  model = '';
  level = 0;

  // admission
  /** The limits admitted against, to add the tokens to afterwards. */
  checks: LimitCheck[] = NO_CHECKS;

  // dispatch
  /** The last body sent upstream and its model, reused by the next attempt. */
  body: Buffer | undefined = undefined;
  bodyModel: string | undefined = undefined;
  /** The key, Level and model that delivered the answer: what settle bills. */
  servedBy: PooledKey | undefined = undefined;
  servedLevel = 0;
  servedModel = '';

  constructor(
    readonly ex: ClientExchange,
    readonly endpoint: Endpoint,
    /** The `/v1/...` path of the endpoint, whichever alias the client called. */
    readonly path: string,
  ) {
    this.anthropic = endpoint === 'messages';
  }
}

const NO_CHECKS: LimitCheck[] = [];
