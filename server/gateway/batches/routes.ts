/**
 * The batch routes: OpenAI's Batch API and Anthropic's Message Batches, each also without
 * `/v1`. `:id` is the provider's batch ID; `canonical` names the route in the request log,
 * metrics and RESOURCES, the ID left out. Served by `ProxyPipeline.serveBatch`.
 */

/** Which API the client called (and the provider runs): its wire format and error envelope. */
export type BatchApi = 'openai' | 'anthropic';

export type BatchAction = 'create' | 'list' | 'retrieve' | 'cancel' | 'results' | 'delete';

export interface BatchRoute {
  api: BatchApi;
  method: 'GET' | 'POST' | 'DELETE';
  /** uWS pattern (`:id`). */
  path: string;
  action: BatchAction;
  canonical: string;
}

const routes = (api: BatchApi, method: BatchRoute['method'], canonical: string, action: BatchAction): BatchRoute[] => {
  const path = canonical.replace('{id}', ':id');
  return [{ api, method, path, action, canonical }, { api, method, path: path.slice(3), action, canonical }];
};

export const BATCH_ROUTES: readonly BatchRoute[] = [
  ...routes('openai', 'POST', '/v1/batches', 'create'),
  ...routes('openai', 'GET', '/v1/batches', 'list'),
  ...routes('openai', 'GET', '/v1/batches/{id}', 'retrieve'),
  ...routes('openai', 'POST', '/v1/batches/{id}/cancel', 'cancel'),
  ...routes('anthropic', 'POST', '/v1/messages/batches', 'create'),
  ...routes('anthropic', 'GET', '/v1/messages/batches', 'list'),
  ...routes('anthropic', 'GET', '/v1/messages/batches/{id}', 'retrieve'),
  ...routes('anthropic', 'GET', '/v1/messages/batches/{id}/results', 'results'),
  ...routes('anthropic', 'POST', '/v1/messages/batches/{id}/cancel', 'cancel'),
  ...routes('anthropic', 'DELETE', '/v1/messages/batches/{id}', 'delete'),
];

/** The routes OpenAI batch lines may call (its Batch API's `endpoint`). */
export const OPENAI_BATCH_ENDPOINTS: ReadonlySet<string> = new Set(['/v1/chat/completions', '/v1/responses', '/v1/embeddings', '/v1/completions']);

/** Batch IDs as providers make them (`batch_…`, `msgbatch_…`): anything else is no batch, and never reaches a path upstream. */
export const BATCH_ID = /^[A-Za-z0-9_-]{1,200}$/;
