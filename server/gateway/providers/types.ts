import type { PooledKey } from '../../state/provider-keys/key-pool';

/** The client-facing endpoints the proxy serves (gateway/routes.ts describes each). */
export type Endpoint =
  | 'chat' | 'responses' | 'embeddings' | 'messages' | 'count_tokens'
  | 'completions' | 'moderations' | 'rerank'
  | 'images' | 'image-edits' | 'image-variations'
  | 'transcriptions' | 'translations' | 'speech' | 'realtime';

/** The endpoints in Anthropic's format (Messages and its token count). */
export type AnthropicEndpoint = 'messages' | 'count_tokens';

/** Each OpenAI-format endpoint's path below an OpenAI-compatible upstream's `/v1`. */
export const OPENAI_PATHS: Readonly<Record<Exclude<Endpoint, AnthropicEndpoint>, string>> = {
  chat: '/chat/completions',
  responses: '/responses',
  embeddings: '/embeddings',
  completions: '/completions',
  moderations: '/moderations',
  rerank: '/rerank',
  images: '/images/generations',
  'image-edits': '/images/edits',
  'image-variations': '/images/variations',
  transcriptions: '/audio/transcriptions',
  translations: '/audio/translations',
  speech: '/audio/speech',
  // A WebSocket (gateway/realtime/): the target's origin is turned into ws:// or wss://.
  realtime: '/realtime',
};

/** The wire format an upstream answers in, which decides how usage is read. */
export type WireFormat = 'openai' | 'anthropic';

/** What a provider kind needs to know about one upstream call. */
export interface CallInfo {
  endpoint: Endpoint;
  /** The model to route (after mapping or failover). */
  model: string;
  /** The client's request headers (lower-case names). */
  headers: Record<string, string>;
  /** The call asks for an event stream (a kind whose streamed calls go to another path reads it). */
  stream?: boolean;
}

/**
 * A change an upstream needs in the JSON body beyond the model name (Vertex's rawPredict: no
 * `model`, an `anthropic_version`). Only a kind that must sets one: its body is parsed and
 * written again, while every other target's body goes as the client sent it.
 */
export interface BodyEdit {
  /** Names the edit in the call's body cache: one ID, one edit. */
  readonly id: string;
  /** Edits top-level fields of a shallow copy of the (translated) request. */
  apply(doc: Record<string, unknown>): void;
}

/** One upstream request, as a provider kind maps it. */
export interface UpstreamTarget {
  /** `https://host:port` */
  origin: string;
  /** Path and query. */
  path: string;
  headers: Record<string, string>;
  /** The model name the upstream expects, when it differs from the routed one. */
  model?: string;
  format: WireFormat;
  edit?: BodyEdit;
}

/** A key that cannot serve this call (wrong endpoint, no deployment): try the next one. */
export interface Skip {
  skip: string;
}

export type Prepared = UpstreamTarget | Skip;

export const isSkip = (p: Prepared): p is Skip => (p as Skip).skip !== undefined;

/**
 * An upstream provider kind (`config.provider_type`): how a routed call becomes an upstream
 * request for one provider key. Answers come back in the OpenAI or Anthropic wire format.
 * A new kind is a folder beside standard/, azure/, vertex/ and anthropic/, registered in
 * registry.ts by its `provider_type`.
 */
export interface ProviderKind {
  readonly type: string;
  /**
   * The endpoints this key serves in their own format. The proxy calls `prepare` only with one
   * of them: a client endpoint the key lacks is translated to one it has when a translation
   * exists (gateway/formats: chat ⇄ messages, responses → messages or chat), else the key is
   * skipped. Called per attempt: answer a set built once per key.
   */
  serves(key: PooledKey): ReadonlySet<Endpoint>;
  prepare(key: PooledKey, call: CallInfo): Prepared | Promise<Prepared>;
  /**
   * After an upstream 401: drops derived credentials (an access token) and says whether the
   * key deserves one more try with fresh ones before it is disabled.
   */
  renewCredentials?(key: PooledKey): boolean;
}

/**
 * A failure before the upstream answered the call itself (e.g. a token exchange), with how
 * the proxy should treat the key: `auth` disables it, `retryable` tries the next key.
 */
export class UpstreamSetupError extends Error {
  constructor(readonly kind: 'auth' | 'retryable', message: string, readonly status?: number) {
    super(message);
  }
}

/** `https://host/base/` → origin and base path (no trailing slash), computed once per key. */
export interface KeyBase {
  origin: string;
  basePath: string;
  host: string;
}

const bases = new WeakMap<PooledKey, KeyBase>();

/** The key's Provider URL split once; PooledKey objects are rebuilt on reload, so this stays right. */
export function keyBase(key: PooledKey): KeyBase {
  let b = bases.get(key);
  if (!b) {
    const u = new URL(key.provider);
    b = { origin: u.origin, basePath: u.pathname.replace(/\/+$/, ''), host: u.hostname.toLowerCase() };
    bases.set(key, b);
  }
  return b;
}

/** A Provider URL that already ends in `/v1` (e.g. `https://api.groq.com/openai/v1`) gets no second one. */
export function versioned(basePath: string, rest: string): string {
  return /\/v1$/.test(basePath) ? `${basePath}${rest}` : `${basePath}/v1${rest}`;
}
