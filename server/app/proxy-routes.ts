import type { HttpRequest, HttpResponse, TemplatedApp } from '../core/http/uws';
import { StreamingExchange } from '../core/http/stream-writer';
import { registerWebSocket } from '../core/http/websocket';
import type { Settings } from '../core/settings';
import { proxyErrorBody } from '../gateway/errors';
import type { AiProxy } from '../gateway/proxy';
import { REALTIME_PATHS, ROUTES } from '../gateway/routes';
import { REALTIME_HEADERS } from '../gateway/realtime/session';

type Handler = (res: HttpResponse, req: HttpRequest) => void;
type Limits = Pick<Settings, 'maxBodyBytes' | 'maxUploadBytes' | 'maxFileBytes'>;

/** The transport's own refusals (body framing) answer in the route's format, as the proxy's do. */
const anthropicError = (status: number, message: string, code: string) => proxyErrorBody('anthropic', status, message, code);

/** Registers `handler` for a route's method. */
function on(app: TemplatedApp, method: 'GET' | 'POST' | 'DELETE', path: string, handler: Handler): void {
  if (method === 'POST') app.post(path, handler);
  else if (method === 'GET') app.get(path, handler);
  else app.del(path, handler);
}

/**
 * The AI proxy's routes, on plain uWS (the hot path): the calls, stored responses, the Files
 * API, batches and realtime. Gemini's own paths are beside them (gemini-routes.ts).
 */
export function registerProxyRoutes(app: TemplatedApp, proxy: AiProxy, limits: Limits): void {
  for (const [path, endpoint, canonical] of proxy.routes) {
    const errorBody = endpoint === 'messages' || endpoint === 'count_tokens' ? anthropicError : undefined;
    // Uploads (multipart audio and images) stream upstream as they arrive, up to MAX_UPLOAD_BYTES.
    const uploadLimit = ROUTES[endpoint].body === 'multipart' ? limits.maxUploadBytes : undefined;
    app.post(path, (res, req) => proxy.serve(new StreamingExchange(res, req, limits.maxBodyBytes, proxy.headerNames, errorBody, uploadLimit), endpoint, canonical));
  }
  // A stored response's reads and deletion (GET, DELETE; the response ID is the path's one parameter).
  for (const route of proxy.storedResponseRoutes) {
    on(app, route.method, route.path, (res, req) => {
      const id = req.getParameter(0) ?? '';
      const ex = new StreamingExchange(res, req, limits.maxBodyBytes, proxy.headerNames);
      proxy.serveStoredResponse(ex, route, id, ex.query);
    });
  }
  // The Files API: uploads stream upstream as they arrive, up to MAX_FILE_BYTES; reads and deletion take the file ID.
  for (const route of proxy.fileRoutes) {
    const uploadLimit = route.action === 'upload' ? limits.maxFileBytes : undefined;
    const hasId = route.path.includes(':id');
    on(app, route.method, route.path, (res, req) => {
      const id = hasId ? req.getParameter(0) ?? '' : '';
      const ex = new StreamingExchange(res, req, limits.maxBodyBytes, proxy.headerNames, undefined, uploadLimit);
      proxy.serveFile(ex, route, id, ex.query);
    });
  }
  // The batch routes (OpenAI's and Anthropic's); `:id` is the provider's batch ID.
  for (const route of proxy.batchRoutes) {
    const hasId = route.path.includes(':id');
    const errorBody = route.api === 'anthropic' ? anthropicError : undefined;
    on(app, route.method, route.path, (res, req) => {
      const id = hasId ? req.getParameter(0) ?? '' : '';
      const ex = new StreamingExchange(res, req, limits.maxBodyBytes, proxy.batchHeaderNames, errorBody);
      proxy.serveBatch(ex, route, id, ex.query);
    });
  }
  // Realtime sessions on uWS's own WebSockets; the gateway sees them through core/http/websocket.ts.
  registerWebSocket(app, REALTIME_PATHS, REALTIME_HEADERS, (u) => proxy.realtime.serve(u));
  // Ephemeral client secrets would let a browser reach the provider directly, past billing: refused (docs/decisions.md).
  for (const path of ['/v1/realtime/client_secrets', '/realtime/client_secrets', '/v1/realtime/sessions', '/realtime/sessions']) {
    app.post(path, (res) => {
      res.cork(() => res.writeStatus('403 Forbidden').writeHeader('content-type', 'application/json')
        .end(proxyErrorBody('openai', 403, 'Realtime client secrets are not issued here: connect to /v1/realtime over WebSocket with your Switchyard API key (Authorization header or the openai-insecure-api-key subprotocol)', 'client_secrets_unsupported')));
    });
  }
}
