import type { Endpoint, GeminiEndpoint } from './providers/types';

/**
 * How a route is billed: `tokens` by the answer's token usage through ChatPricing (chat,
 * responses, embeddings, messages, legacy completions); the others by their own unit through
 * PRICING's per-route sections (domain/pricing/units.ts).
 */
export type Meter = 'tokens' | 'call' | 'rerank' | 'image' | 'transcription' | 'speech' | 'realtime';

/** One client-facing endpoint: where it is served, how its body arrives, what it is billed by. */
export interface RouteSpec {
  endpoint: Endpoint;
  /** The canonical `/v1/...` path (RESOURCES, the request log, metrics). */
  path: string;
  /** `json` bodies are read whole (the size limit); `multipart` uploads stream upstream; `websocket` is a session (realtime/). */
  body: 'json' | 'multipart' | 'websocket';
  meter: Meter;
  /** Whether the proxy reads the body's `stream` (the routes whose answers can be event streams). */
  streams: boolean;
  /** A route that costs nothing (counting tokens, as at Anthropic): neither admitted nor settled (pipeline.ts). */
  free: boolean;
}

const route = (endpoint: Endpoint, path: string, meter: Meter, streams: boolean, body: RouteSpec['body'] = 'json', free = false): RouteSpec => ({ endpoint, path, body, meter, streams, free });

export const ROUTES: Readonly<Record<Endpoint, RouteSpec>> = {
  chat: route('chat', '/v1/chat/completions', 'tokens', true),
  responses: route('responses', '/v1/responses', 'tokens', true),
  embeddings: route('embeddings', '/v1/embeddings', 'tokens', false),
  messages: route('messages', '/v1/messages', 'tokens', true),
  count_tokens: route('count_tokens', '/v1/messages/count_tokens', 'tokens', false, 'json', true),
  completions: route('completions', '/v1/completions', 'tokens', true),
  moderations: route('moderations', '/v1/moderations', 'call', false),
  rerank: route('rerank', '/v1/rerank', 'rerank', false),
  images: route('images', '/v1/images/generations', 'image', true),
  'image-edits': route('image-edits', '/v1/images/edits', 'image', true, 'multipart'),
  'image-variations': route('image-variations', '/v1/images/variations', 'image', false, 'multipart'),
  transcriptions: route('transcriptions', '/v1/audio/transcriptions', 'transcription', true, 'multipart'),
  translations: route('translations', '/v1/audio/translations', 'transcription', false, 'multipart'),
  // Speech streams by `stream_format: "sse"`, not `stream` (read-body.ts).
  speech: route('speech', '/v1/audio/speech', 'speech', false),
  realtime: route('realtime', '/v1/realtime', 'realtime', true, 'websocket'),
  // Gemini's format: the model and the method are in the path, the stream is the method (GEMINI_PATHS).
  gemini: route('gemini', '/v1beta/models/{model}:generateContent', 'tokens', true),
  gemini_count: route('gemini_count', '/v1beta/models/{model}:countTokens', 'tokens', false, 'json', true),
  gemini_embed: route('gemini_embed', '/v1beta/models/{model}:embedContent', 'tokens', false),
};

/** The proxy's POST routes, each also without `/v1` as the reference serves them: `[path, endpoint, canonical]`. */
export const PROXY_ROUTES: readonly [path: string, endpoint: Endpoint, canonical: string][] = Object.values(ROUTES)
  .filter((r) => r.body !== 'websocket' && !r.path.includes('{model}'))
  .flatMap((r) => [[r.path, r.endpoint, r.path], [r.path.slice(3), r.endpoint, r.path]] as [string, Endpoint, string][]);

/** The WebSocket routes (GET with an upgrade), with their aliases. */
export const REALTIME_PATHS: readonly string[] = [ROUTES.realtime.path, ROUTES.realtime.path.slice(3)];

/** What a client does to a stored response: read it, list its input items, delete it (stages/stored-response.ts). */
export type StoredResponseAction = 'retrieve' | 'input_items' | 'delete';

/**
 * The routes on a stored response (`:id` is the response ID), each also without `/v1`: no body,
 * free (neither admitted nor billed), served by `ProxyPipeline.serveStoredResponse`. `canonical`
 * names the route in logs and metrics, the ID left out.
 */
export interface StoredResponseRoute {
  method: 'GET' | 'DELETE';
  path: string;
  action: StoredResponseAction;
  canonical: string;
}

const storedRoutes = (method: StoredResponseRoute['method'], canonical: string, action: StoredResponseAction): StoredResponseRoute[] => {
  const path = canonical.replace('{id}', ':id');
  return [{ method, path, action, canonical }, { method, path: path.slice(3), action, canonical }];
};

export const STORED_RESPONSE_ROUTES: readonly StoredResponseRoute[] = [
  ...storedRoutes('GET', '/v1/responses/{id}', 'retrieve'),
  ...storedRoutes('GET', '/v1/responses/{id}/input_items', 'input_items'),
  ...storedRoutes('DELETE', '/v1/responses/{id}', 'delete'),
];

/**
 * The Gemini API's model routes, `{prefix}{model}:{method}`: `/v1beta/models/` as Google
 * documents it, `/v1/models/` as `@google/genai` calls it by default (POST only, so OpenAI's
 * `GET /v1/models` is untouched). Registered as wildcards: the path is read by `geminiRoute`.
 */
export const GEMINI_PATHS: readonly string[] = ['/v1beta/models/', '/v1/models/'];

/** What a Gemini-format call's path and query say that its body does not. */
export interface PathParams {
  /** The model named in the path (`models/` left out). */
  model: string;
  /** The method streams: as server-sent events (`?alt=sse`, what the SDK asks for) or as a JSON array written as it comes. */
  stream: 'sse' | 'array' | null;
  /** The account key given as `?key=`: a credential, never logged (the call's path is its canonical form). */
  key: string | null;
  /** The method named in the path (`generateContent`, `embedContent`, …): a `gemini` key is called with the same. */
  method: string;
}

const GEMINI_METHODS: Readonly<Record<string, { endpoint: GeminiEndpoint; stream: boolean }>> = {
  generateContent: { endpoint: 'gemini', stream: false },
  streamGenerateContent: { endpoint: 'gemini', stream: true },
  countTokens: { endpoint: 'gemini_count', stream: false },
  embedContent: { endpoint: 'gemini_embed', stream: false },
  batchEmbedContents: { endpoint: 'gemini_embed', stream: false },
};

/** A Gemini call read from its path and query: the endpoint, the canonical path for logs and RESOURCES, and its params; null for an unknown method. */
export function geminiRoute(path: string, query: string): { endpoint: GeminiEndpoint; canonical: string; params: PathParams } | null {
  const prefix = GEMINI_PATHS.find((p) => path.startsWith(p));
  if (!prefix) return null;
  const rest = path.slice(prefix.length);
  // A model name may hold a colon (`gpt-4o:ft-…`): the method follows the last one.
  const colon = rest.lastIndexOf(':');
  if (colon <= 0) return null;
  const method = GEMINI_METHODS[rest.slice(colon + 1)];
  if (!method) return null;
  let model: string;
  try { model = decodeURIComponent(rest.slice(0, colon)); } catch { return null; }
  const q = new URLSearchParams(query);
  const stream = method.stream ? (q.get('alt') === 'sse' ? 'sse' : 'array') : null;
  const canonical = `/v1beta/models/{model}:${rest.slice(colon + 1)}`;
  return { endpoint: method.endpoint, canonical, params: { model, stream, key: q.get('key') || null, method: rest.slice(colon + 1) } };
}
