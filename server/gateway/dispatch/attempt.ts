import type { UpstreamClient } from '../../adapters/upstream-http/client';
import { TIMEOUT_CODES, type ResponseController, type ResponseHandler, type UpstreamHttpError } from '../../adapters/upstream-http/types';
import type { ClientExchange, ResponseStream } from '../transport';
import type { TokenUsage } from '../../domain/pricing/cost';
import type { UpstreamTarget } from '../providers/types';
import { dropped, failStream, type UpstreamHeaders } from './relay';
import { SseTap } from './sse';
import { usageFromBody } from './response-usage';
import { streamErrorEvent } from '../errors';

export interface AttemptInput {
  ex: ClientExchange;
  /** The client called `/v1/messages`: an interrupted stream ends with Anthropic's error event. */
  anthropicClient: boolean;
  client: Pick<UpstreamClient, 'dispatch'>;
  target: UpstreamTarget;
  body: Buffer;
  headersTimeoutMs: number;
  idleTimeoutMs: number;
  /** A streamed call: the first event must arrive this soon after the request went out. */
  firstByteTimeoutMs?: number;
  /** The gateway's request ID, named in the error event of an interrupted stream. */
  requestId: string;
  /** The proxy asked for the usage chunk itself: keep it from the client. */
  dropUsageOnly: boolean;
  /** W3C trace context for the upstream (traceparent, tracestate), when there is one. */
  trace?: Record<string, string>;
}

/** The answer reached the client (whole, partly, or as an upstream 4xx passed through). */
export interface Delivered {
  kind: 'delivered';
  status: number;
  usage: TokenUsage | null;
  /** The usage is final (not a partial count of a cut stream). */
  complete: boolean;
  streamed: boolean;
  events: number;
  /** The upstream cut or stalled the stream after the first byte, or sent an error event. */
  abnormal: boolean;
  /** The client went away while the answer was on its way. */
  clientGone: boolean;
  /** Why the upstream stream ended uncleanly (for the log; the client saw only a stable code). */
  interruption?: string;
}

/** Nothing reached the client: the proxy may try the next key. */
export interface Failed {
  kind: 'failed';
  reason: string;
  status?: number;
  timeout?: boolean;
  headers?: UpstreamHeaders;
  /** The upstream's error text (trimmed), for the disabled reason. */
  detail?: string;
  /** A kept connection closed as the request went out: the upstream never read it (see UpstreamHttpError). */
  stale?: boolean;
}

export interface ClientGone {
  kind: 'client-gone';
}

export type Outcome = Delivered | Failed | ClientGone;

export const CLIENT_GONE: ClientGone = { kind: 'client-gone' };

/** 408, 429 and 5xx may succeed on another key; 401/403 mean this key is bad. Anything else is the client's. */
export const isRetryableStatus = (s: number) => s === 408 || s === 429 || s >= 500 || s === 401 || s === 403;

function failure(err: unknown): Failed {
  const code = (err as { code?: string })?.code ?? '';
  const message = (err as Error)?.message ?? String(err);
  return { kind: 'failed', reason: code ? `${code}: ${message}` : message, timeout: TIMEOUT_CODES.has(code), stale: (err as UpstreamHttpError)?.staleConnection === true };
}

const isEventStream = (headers: UpstreamHeaders) => {
  const t = headers['content-type'];
  return typeof t === 'string' && t.includes('text/event-stream');
};

/**
 * One upstream call for one provider key, on the proxy's own HTTP client (no stream objects,
 * no AbortSignal per call). Anything that fails before the first byte reaches the client comes
 * back as `failed` so the next key can be tried; from the first byte on the answer belongs to
 * the client, and an interruption ends it with an error.
 */
export function attempt(a: AttemptInput): Promise<Outcome> {
  return new Promise((resolve) => {
    a.client.dispatch({
      origin: a.target.origin,
      path: a.target.path,
      method: 'POST',
      // The target's headers are shared by every call on the key: a trace context is added to a copy.
      headers: a.trace ? { ...a.target.headers, ...a.trace } : a.target.headers,
      contentType: 'application/json',
      body: a.body,
      headersTimeout: a.headersTimeoutMs,
      bodyTimeout: a.idleTimeoutMs,
      firstByteTimeout: a.firstByteTimeoutMs,
    }, new UpstreamHandler(a, resolve));
  });
}

const CLIENT_LEFT = new Error('the client went away');

class UpstreamHandler implements ResponseHandler {
  private controller: ResponseController | null = null;
  private done = false;
  private status = 0;
  private headers: UpstreamHeaders = {};
  /** Whole answers (and error answers) are collected; event streams are relayed as they come. */
  private chunks: Buffer[] = [];
  private tap: SseTap | null = null;
  private out: ResponseStream | null = null;

  constructor(private readonly a: AttemptInput, private readonly resolve: (o: Outcome) => void) {
    a.ex.onAbort(() => {
      if (!this.done) this.controller?.abort(CLIENT_LEFT);
    });
  }

  private finish(o: Outcome): void {
    if (this.done) return;
    this.done = true;
    this.resolve(o);
  }

  onRequestStart(controller: ResponseController): void {
    this.controller = controller;
    if (this.a.ex.aborted) controller.abort(CLIENT_LEFT);
  }

  onResponseStart(_c: ResponseController, statusCode: number, headers: UpstreamHeaders): void {
    this.status = statusCode;
    this.headers = headers;
    if (statusCode >= 200 && statusCode < 300 && isEventStream(headers)) {
      this.tap = new SseTap(this.a.target.format, this.a.dropUsageOnly);
      this.out = this.a.ex.openStream(statusCode, headers, dropped);
    }
  }

  onResponseData(controller: ResponseController, chunk: Buffer): void {
    if (!this.tap || !this.out) {
      this.chunks.push(chunk);
      return;
    }
    if (this.a.ex.aborted) return;
    const bytes = this.tap.push(chunk);
    if (bytes.length === 0) return;
    const wait = this.out.write(bytes);
    if (wait) {
      // The client reads slower than the upstream writes: stop reading until it drained.
      controller.pause();
      wait.then(() => controller.resume());
    }
  }

  onResponseEnd(): void {
    const a = this.a;
    if (a.ex.aborted) return this.finish(this.out?.started ? this.delivered(false, true) : CLIENT_GONE);
    if (this.out && this.tap) {
      this.out.end(this.tap.end());
      return this.finish(this.delivered(this.tap.sawError, false));
    }
    const body = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks);
    const status = this.status;
    if (status >= 300 && isRetryableStatus(status)) {
      return this.finish({ kind: 'failed', status, reason: `upstream answered ${status}`, headers: this.headers, detail: body.toString('utf8', 0, Math.min(body.length, 500)) });
    }
    const usage = status < 300 ? usageFromBody(body, a.target.format) : null;
    a.ex.relay(status, this.headers, dropped, body);
    this.finish({ kind: 'delivered', status, usage, complete: usage !== null, streamed: false, events: 0, abnormal: false, clientGone: false });
  }

  onResponseError(_c: ResponseController, err: Error): void {
    const a = this.a;
    if (a.ex.aborted || err === CLIENT_LEFT) return this.finish(this.out?.started ? this.delivered(false, true) : CLIENT_GONE);
    if (!this.out?.started) return this.finish(failure(err));
    // Cut or stalled after the first byte: the client gets an error, never a clean end. The
    // cause (which may name the upstream) goes to the log under the request ID, not to the client.
    const out = this.out;
    const reason = failure(err).reason;
    failStream(out, streamErrorEvent(a.anthropicClient, `The upstream stream was interrupted; nothing more will come (request ${a.requestId})`, a.requestId))
      .then(() => this.finish({ ...this.delivered(true, false), interruption: reason }));
  }

  private delivered(abnormal: boolean, clientGone: boolean): Delivered {
    const tap = this.tap!;
    return { kind: 'delivered', status: this.status, usage: tap.usage, complete: tap.complete, streamed: true, events: tap.events, abnormal, clientGone };
  }
}
