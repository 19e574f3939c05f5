import type { PooledKey } from '../../state/provider-keys/key-pool';

/** The client-facing endpoints the proxy serves (gateway/routes.ts describes each). */
export type Endpoint =
  | 'chat' | 'responses' | 'embeddings' | 'messages' | 'count_tokens'
  | 'completions' | 'moderations' | 'rerank'
  | 'images' | 'image-edits' | 'image-variations'
  | 'transcriptions' | 'translations' | 'speech' | 'realtime'
  | GeminiEndpoint;

/** The endpoints in Anthropic's format (Messages and its token count). */
export type AnthropicEndpoint = 'messages' | 'count_tokens';

/**
 * The endpoints in Gemini's format (`models/{model}:generateContent` and its stream,
 * `:countTokens`, `:embedContent` and `:batchEmbedContents`): the model is in the path (routes.ts).
 */
export type GeminiEndpoint = 'gemini' | 'gemini_count' | 'gemini_embed';

/** Each OpenAI-format endpoint's path below an OpenAI-compatible upstream's `/v1`. */
export const OPENAI_PATHS: Readonly<Record<Exclude<Endpoint, AnthropicEndpoint | GeminiEndpoint>, string>> = {
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

/**
 * An endpoint a provider key serves: the client-facing ones, and Bedrock's Converse
 * (`/model/{id}/converse`), which no client calls in: every client format is translated to it.
 */
export type ProviderEndpoint = Endpoint | 'converse';

/** The wire format an upstream answers in, which decides how usage is read. */
export type WireFormat = 'openai' | 'anthropic' | 'gemini' | 'converse';

/** What a provider kind needs to know about one upstream call. */
export interface CallInfo {
  endpoint: ProviderEndpoint;
  /** The model to route (after mapping or failover). */
  model: string;
  /** The client's request headers (lower-case names). */
  headers: Record<string, string>;
  /** The call asks for an event stream (a kind whose streamed calls go to another path reads it). */
  stream?: boolean;
  /** A Gemini-format client's method (`generateContent`, `embedContent`, …), named in its path. */
  method?: string;
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
  /** How this upstream's wire differs from JSON and server-sent events under fixed headers (Bedrock's). */
  wire?: UpstreamWire;
}

/**
 * What an upstream speaking `format` in another envelope needs (AWS Bedrock: signed requests,
 * event-stream framing, its own error shape). Every attempt (and the admission's token count)
 * goes through these, so a kind's wire has one home: its own folder.
 */
export interface UpstreamWire {
  /** The headers to send for these exact body bytes (e.g. a SigV4 signature over them); `headers` is never mutated. */
  sign?(path: string, headers: Record<string, string>, body: Buffer): Promise<Record<string, string>>;
  /** A 2xx stream of this content type is framed otherwise: `deframe` turns its bytes into `format`'s SSE events. */
  streamType?: string;
  deframe?(): UpstreamDeframer;
  /**
   * An error answer in the upstream's own shape as `format`'s, without text that may carry
   * credentials, and the status it means (a refused credential is 401/403 whatever AWS answered).
   */
  error?(status: number, body: Buffer, headers: Readonly<Record<string, string | string[]>>): { status: number; body: Buffer };
  /** A whole 2xx answer as `format`'s (e.g. a token count's `inputTokens` as `input_tokens`). */
  answer?(body: Buffer): Buffer;
}

/** An upstream stream's own framing undone, chunk by chunk, into server-sent events. */
export interface UpstreamDeframer {
  /** The SSE bytes of the events completed by this chunk (an error event when the framing is broken). */
  push(chunk: Buffer): Buffer;
  /** What closes the stream: an error event when it ended inside a frame. */
  end(): Buffer;
}

/** A key that cannot serve this call (wrong endpoint, no deployment): try the next one. */
export interface Skip {
  skip: string;
}

export type Prepared = UpstreamTarget | Skip;

export const isSkip = (p: Prepared): p is Skip => (p as Skip).skip !== undefined;

/**
 * An upstream provider kind (`config.provider_type`): how a routed call becomes an upstream
 * request for one provider key. Answers come back in its target's WireFormat.
 * A new kind is a folder beside standard/, azure/, vertex/ and anthropic/, registered in
 * registry.ts by its `provider_type`.
 */
export interface ProviderKind {
  readonly type: string;
  /**
   * The model catalogue's provider whose entries price this kind's own model IDs (`aws` for
   * Bedrock's): a call sent upstream as such an ID is billed at its catalogue price, where the
   * catalogue has one (pricing/cost.ts resolvePrice). Unset: the client-facing model's price.
   */
  readonly catalogue?: string;
  /**
   * The endpoints this key serves in their own format. The proxy calls `prepare` only with one
   * of them: a client endpoint the key lacks is translated to one it has when a translation
   * exists (gateway/formats: chat ⇄ messages, responses → messages or chat), else the key is
   * skipped. Called per attempt: answer a set built once per key (or per key and kind of
   * model: a Bedrock key speaks Anthropic's Messages for Claude and Converse for other models).
   * `model` is the routed model (after mapping or failover), as `prepare` gets it; '' when the
   * call names none (a stored response's lookup).
   */
  serves(key: PooledKey, model: string): ReadonlySet<ProviderEndpoint>;
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
