import { defaultCode, errorType } from '../../contract/errors';
import type { ClientExchange } from './transport';

/** Anthropic's error `type` for a status, so the Anthropic SDK raises its matching class. */
function anthropicType(status: number): string {
  switch (status) {
    case 400: case 413: case 415: case 422: return status === 413 ? 'request_too_large' : 'invalid_request_error';
    case 401: return 'authentication_error';
    case 402: return 'billing_error';
    case 403: return 'permission_error';
    case 404: return 'not_found_error';
    case 429: return 'rate_limit_error';
    case 503: case 529: return 'overloaded_error';
    case 504: return 'timeout_error';
    default: return 'api_error';
  }
}

/**
 * The error body of the proxy: the gateway's envelope `{"error":{"message","type","code"}}`
 * on the OpenAI-format routes, Anthropic's `{"type":"error","error":{"type","message"}}`
 * (plus our `code`) on `/v1/messages`, so each SDK raises its own error classes. With a
 * request ID, `request_id` names the call, as the log lines about it do.
 */
export function proxyErrorBody(anthropic: boolean, status: number, message: string, code?: string, requestId?: string): string {
  const c = code ?? defaultCode(status);
  const id = requestId ? { request_id: requestId } : undefined;
  return anthropic
    ? JSON.stringify({ type: 'error', error: { type: anthropicType(status), message, code: c, ...id } })
    : JSON.stringify({ error: { message, type: errorType(status), code: c, ...id } });
}

/** Why the proxy answers a call itself instead of relaying an upstream answer. */
export interface Refusal {
  status: number;
  message: string;
  code: string;
  headers?: Record<string, string>;
}

/** What a stage decides: `null` lets the call go on, a Refusal is answered to the client. */
export type Verdict = Refusal | null;

/** The client left before the call could be answered: nothing is sent. */
export const CLIENT_LEFT: Refusal = { status: 499, message: 'The client went away', code: 'client_gone' };

/** Sends a refusal in the format of the route the client called, with the call's request ID. */
export function refuse(c: { ex: ClientExchange; anthropic: boolean; id?: string }, r: Refusal): void {
  if (r === CLIENT_LEFT) return;
  sendProxyError(c.ex, c.anthropic, r.status, r.message, r.code, r.headers, c.id);
}

export function sendProxyError(ex: ClientExchange, anthropic: boolean, status: number, message: string, code?: string, headers?: Record<string, string>, requestId?: string): void {
  // A call's stamp writes its own x-request-id into every head (call.ts).
  const h = requestId && !ex.stamp
    ? { 'content-type': 'application/json', 'x-request-id': requestId, ...headers }
    : headers ? { 'content-type': 'application/json', ...headers } : JSON_HEADERS;
  ex.send(status, h, proxyErrorBody(anthropic, status, message, code, requestId));
}

const JSON_HEADERS = { 'content-type': 'application/json' };

/**
 * The SSE event that ends a stream the upstream cut or stalled after the first byte. Both
 * SDKs raise on it: OpenAI's on any event whose data has `error`, Anthropic's on `event: error`.
 */
export function streamErrorEvent(anthropic: boolean, message: string, requestId?: string): Buffer {
  const id = requestId ? { request_id: requestId } : undefined;
  const body = anthropic
    ? { type: 'error', error: { type: 'api_error', message, code: 'stream_interrupted', ...id } }
    : { error: { message, type: 'server_error', code: 'stream_interrupted', ...id } };
  return Buffer.from(`event: error\ndata: ${JSON.stringify(body)}\n\n`);
}
