import { defaultCode, errorType } from '../../contract/errors';
import type { ClientExchange } from './transport';
import type { Endpoint } from './providers/types';

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

/** The error envelope a client format reads: the gateway's (OpenAI's) own, Anthropic's or Google's. */
export type ErrorFormat = 'openai' | 'anthropic' | 'gemini';

/** The envelope a client calling `endpoint` reads its errors in. */
export const errorFormatOf = (endpoint: Endpoint): ErrorFormat =>
  endpoint === 'messages' || endpoint === 'count_tokens' ? 'anthropic' : endpoint === 'gemini' || endpoint === 'gemini_count' || endpoint === 'gemini_embed' ? 'gemini' : 'openai';

/** Google's canonical status name for an HTTP status (google.rpc.Code), as the Gemini API gives it. */
function googleStatus(status: number): string {
  switch (status) {
    case 400: case 413: case 415: case 422: return 'INVALID_ARGUMENT';
    case 401: return 'UNAUTHENTICATED';
    case 403: return 'PERMISSION_DENIED';
    case 404: return 'NOT_FOUND';
    case 409: return 'ABORTED';
    // Insufficient credit is a quota of ours running out: Google's RESOURCE_EXHAUSTED, with our message and status.
    case 402: case 429: return 'RESOURCE_EXHAUSTED';
    case 499: return 'CANCELLED';
    case 501: return 'UNIMPLEMENTED';
    case 502: case 503: case 529: return 'UNAVAILABLE';
    case 504: return 'DEADLINE_EXCEEDED';
    default: return 'INTERNAL';
  }
}

/**
 * The error body of the proxy, in the envelope of the client's format so each SDK raises its
 * own error classes: the gateway's `{"error":{"message","type","code"}}` on the OpenAI-format
 * routes, Anthropic's `{"type":"error","error":{"type","message"}}` (plus our `code`) on
 * `/v1/messages`, Google's `{"error":{"code","message","status"}}` on the Gemini routes (our
 * code and the request ID in an ErrorInfo detail, where Google puts the reason). With a
 * request ID, `request_id` names the call, as the log lines about it do.
 */
export function proxyErrorBody(format: ErrorFormat, status: number, message: string, code?: string, requestId?: string): string {
  const c = code ?? defaultCode(status);
  const id = requestId ? { request_id: requestId } : undefined;
  if (format === 'gemini') {
    const info = { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: c, domain: 'switchyard', ...(id ? { metadata: id } : {}) };
    return JSON.stringify({ error: { code: status, message, status: googleStatus(status), details: [info] } });
  }
  return format === 'anthropic'
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
export function refuse(c: { ex: ClientExchange; errorFormat: ErrorFormat; id?: string }, r: Refusal): void {
  if (r === CLIENT_LEFT) return;
  sendProxyError(c.ex, c.errorFormat, r.status, r.message, r.code, r.headers, c.id);
}

export function sendProxyError(ex: ClientExchange, format: ErrorFormat, status: number, message: string, code?: string, headers?: Record<string, string>, requestId?: string): void {
  // A call's stamp writes its own x-request-id into every head (call.ts).
  const h = requestId && !ex.stamp
    ? { 'content-type': 'application/json', 'x-request-id': requestId, ...headers }
    : headers ? { 'content-type': 'application/json', ...headers } : JSON_HEADERS;
  ex.send(status, h, proxyErrorBody(format, status, message, code, requestId));
}

const JSON_HEADERS = { 'content-type': 'application/json' };

/**
 * The SSE event that ends a stream the upstream cut or stalled after the first byte. The SDKs
 * raise on it: OpenAI's on any event whose data has `error`, Anthropic's on `event: error`,
 * Google's on a chunk that is an error body.
 */
export function streamErrorEvent(format: ErrorFormat, message: string, requestId?: string): Buffer {
  if (format === 'gemini') return Buffer.from(`data: ${proxyErrorBody('gemini', 500, message, 'stream_interrupted', requestId)}\n\n`);
  const id = requestId ? { request_id: requestId } : undefined;
  const body = format === 'anthropic'
    ? { type: 'error', error: { type: 'api_error', message, code: 'stream_interrupted', ...id } }
    : { error: { message, type: 'server_error', code: 'stream_interrupted', ...id } };
  return Buffer.from(`event: error\ndata: ${JSON.stringify(body)}\n\n`);
}

/** The message of an upstream error body in any provider shape (`error.message`, or a top-level `message`). */
function upstreamErrorMessage(body: Buffer): string | undefined {
  try {
    const v = JSON.parse(body.toString('utf8'));
    const m = v?.error?.message ?? v?.message;
    return typeof m === 'string' ? m : undefined;
  } catch {
    return undefined;
  }
}

/** An upstream error answer of a translated call, in the client's error shape: its status and message kept. */
export function translatedErrorBody(format: ErrorFormat, status: number, body: Buffer): Buffer {
  return Buffer.from(proxyErrorBody(format, status, upstreamErrorMessage(body) ?? `The upstream provider answered ${status}`));
}
