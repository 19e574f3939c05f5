import type { Endpoint } from './providers/types';

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
};

/** The proxy's POST routes, each also without `/v1` as the reference serves them: `[path, endpoint, canonical]`. */
export const PROXY_ROUTES: readonly [path: string, endpoint: Endpoint, canonical: string][] = Object.values(ROUTES)
  .filter((r) => r.body !== 'websocket')
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
