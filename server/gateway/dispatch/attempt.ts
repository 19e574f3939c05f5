import type { UpstreamClient } from '../../adapters/upstream-http/client';
import { TIMEOUT_CODES, type ResponseController, type ResponseHandler, type UpstreamHttpError } from '../../adapters/upstream-http/types';
import type { ClientExchange, ResponseStream } from '../transport';
import type { TokenUsage } from '../../domain/pricing/cost';
import type { UpstreamDeframer, UpstreamTarget } from '../providers/types';
import { dropped, failStream, type UpstreamHeaders } from './relay';
import { SseTap } from './sse';
import { usageFromBody } from './response-usage';
import { proxyErrorBody, streamErrorEvent, type ErrorFormat } from '../errors';
import type { StreamTranslator, Translation } from '../formats/index';
import type { ClientContext, Json } from '../formats/types';
import { scrub, scrubHeaders, scrubText, type ScrubKey } from './scrub';

export interface AttemptInput {
  ex: ClientExchange;
  /** The client's error envelope: an interrupted stream ends with its format's error event. */
  errorFormat: ErrorFormat;
  client: Pick<UpstreamClient, 'dispatch'>;
  target: UpstreamTarget;
  /** The key called: its secret and Provider URL are taken out of every error text the client or the Owner sees. */
  key: ScrubKey;
  body: Buffer;
  /** An upload sent as it arrives instead of `body` (upload/form.ts). */
  upload?: { contentType: string; stream: AsyncIterable<Buffer> };
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
  /**
   * The key answers in another format than the client's: its answer is translated on the way
   * out (usage is still read from the upstream's own bytes). `keep` is handed a completed
   * Responses answer (`ctx.completed`) for previous_response_id; the answer's end (a whole
   * answer, a stream's response.completed) reaches the client once it settles, so its
   * continuation, on any instance, finds the conversation.
   */
  translation?: { t: Translation; ctx: ClientContext; keep?: (completed: Json) => Promise<void> };
  /**
   * A stored Responses API answer: its ID is handed here, so the calls continuing it find this
   * key. A whole answer reaches the client once the promise settles: its continuation, on any
   * instance, then finds the pair.
   */
  onResponseId?: (id: string) => Promise<void> | void;
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
  /** A whole JSON answer's bytes (already collected to relay), for routes billed by more than its usage. */
  body?: Buffer;
  /** The last usage object of an event stream, as sent. */
  rawUsage?: unknown;
  /** Bytes of a binary or plain-text answer relayed as it came (speech audio, a transcript as text). */
  bytes?: number;
}

/** Nothing reached the client: the proxy may try the next key. */
export interface Failed {
  kind: 'failed';
  reason: string;
  status?: number;
  timeout?: boolean;
  headers?: UpstreamHeaders;
  /** The upstream's error text (trimmed, scrubbed), for the disabled reason. */
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

/** How much of an upstream error body is scrubbed for the disabled reason, and how much of it is kept. */
const DETAIL_SCAN = 16_384;
const DETAIL_CHARS = 500;

/**
 * An upstream's error answer passed through (a 4xx the client caused): the body and headers
 * without the key's secret or the upstream's host. Only error answers pay for the scan; the
 * server writes the Content-Length of what is sent.
 */
function relayError(a: AttemptInput, status: number, headers: UpstreamHeaders, body: Buffer): void {
  const text = body.toString('utf8');
  const clean = scrubText(text, a.key, a.target.headers);
  a.ex.relay(status, scrubHeaders(headers, a.key, a.target.headers), dropped, clean === text ? body : Buffer.from(clean));
}

const EMPTY = Buffer.alloc(0);
const concatOrNull = (a: Buffer | null, b: Buffer | null): Buffer | null => (a && b ? Buffer.concat([a, b]) : a ?? b);
/** A Response object names its ID first; its stream's first event carries the object. */
const SNIFF_BYTES = 8192;
const RESPONSE_ID = /"id"\s*:\s*"(resp_[A-Za-z0-9_-]{1,200})"/;
const responseIdIn = (text: string): string | undefined => RESPONSE_ID.exec(text)?.[1];
const JSON_HEAD = { 'content-type': 'application/json' };

const isEventStream = (headers: UpstreamHeaders, target: UpstreamTarget) => {
  const t = headers['content-type'];
  if (typeof t !== 'string') return false;
  return t.includes('text/event-stream') || (target.wire?.streamType !== undefined && t.includes(target.wire.streamType));
};
const SSE_HEAD = 'text/event-stream';

/** Neither JSON nor an event stream (audio, a transcript as text, srt or vtt): relayed as it comes, never collected. */
const isPassThrough = (headers: UpstreamHeaders) => {
  const t = headers['content-type'];
  return typeof t === 'string' && !/json|text\/event-stream/i.test(t);
};

/**
 * One upstream call for one provider key, on the proxy's own HTTP client (no stream objects,
 * no AbortSignal per call). Anything that fails before the first byte reaches the client comes
 * back as `failed` so the next key can be tried; from the first byte on the answer belongs to
 * the client, and an interruption ends it with an error.
 */
export function attempt(a: AttemptInput): Promise<Outcome> {
  const sign = a.target.wire?.sign;
  return sign && !a.upload ? signed(a, sign) : send(a);
}

/** A signature covers the exact bytes sent: the target's headers become the signed ones for this attempt only. */
async function signed(a: AttemptInput, sign: NonNullable<NonNullable<UpstreamTarget['wire']>['sign']>): Promise<Outcome> {
  let headers: Record<string, string>;
  try {
    headers = await sign(a.target.path, a.target.headers, a.body);
  } catch (err) {
    return failure(err);
  }
  return send({ ...a, target: { ...a.target, headers } });
}

function send(a: AttemptInput): Promise<Outcome> {
  return new Promise((resolve) => {
    a.client.dispatch({
      origin: a.target.origin,
      path: a.target.path,
      method: 'POST',
      // The target's headers are shared by every call on the key: a trace context is added to a copy.
      headers: a.trace ? { ...a.target.headers, ...a.trace } : a.target.headers,
      contentType: a.upload ? a.upload.contentType : 'application/json',
      body: a.upload ? null : a.body,
      bodyStream: a.upload?.stream,
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
  /** An upstream stream framed otherwise (AWS event-stream) turned into SSE before anything reads it. */
  private deframer: UpstreamDeframer | null = null;
  private out: ResponseStream | null = null;
  private tr: StreamTranslator | null = null;
  /** The start of a stream, read until its response ID shows (response.created comes first). */
  private head: string | null = null;
  /** Bytes relayed of a pass-through answer; -1 for any other answer. */
  private passed = -1;

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
    if (statusCode >= 200 && statusCode < 300 && isEventStream(headers, this.a.target)) {
      const a = this.a;
      const wire = a.target.wire;
      if (wire?.deframe && wire.streamType && String(headers['content-type']).includes(wire.streamType)) {
        this.deframer = wire.deframe();
        headers = { ...headers, 'content-type': SSE_HEAD };
      }
      this.tap = new SseTap(a.target.format, a.dropUsageOnly, (text) => scrubText(text, a.key, a.target.headers));
      if (a.translation) this.tr = a.translation.t.stream(a.translation.ctx);
      if (a.onResponseId) this.head = '';
      // A client format framed otherwise than as events (Gemini's JSON array) says its own type.
      const type = this.tr?.contentType;
      this.out = this.a.ex.openStream(statusCode, type ? { ...headers, 'content-type': type } : headers, dropped);
    } else if (statusCode >= 200 && statusCode < 300 && isPassThrough(headers)) {
      this.passed = 0;
      this.out = this.a.ex.openStream(statusCode, headers, dropped);
    }
  }

  onResponseData(controller: ResponseController, chunk: Buffer): void {
    if (!this.out) {
      this.chunks.push(chunk);
      return;
    }
    if (this.a.ex.aborted) return;
    if (this.passed >= 0) this.passed += chunk.length;
    if (this.deframer) chunk = this.deframer.push(chunk);
    if (this.head !== null) this.sniff(chunk);
    let bytes = this.tap ? this.tap.push(chunk) : chunk;
    if (this.tr) bytes = this.tr.push(bytes);
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
    if (this.out) {
      const framed = this.deframer?.end();
      const rest = this.tap ? concatOrNull(framed?.length ? this.tap.push(framed) : null, this.tap.end()) : null;
      const last = this.tr ? Buffer.concat([rest ? this.tr.push(rest) : EMPTY, this.tr.end()]) : rest;
      const o = this.delivered(this.tap?.sawError ?? false, false);
      const kept = o.abnormal ? undefined : this.kept();
      if (!kept) {
        this.out.end(last);
        return this.finish(o);
      }
      const out = this.out;
      kept.then(() => {
        if (a.ex.aborted) return this.finish(this.delivered(false, true));
        out.end(last);
        this.finish(o);
      });
      return;
    }
    let status = this.status;
    const wire = a.target.wire;
    let body = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks);
    // An upstream with its own envelope (Bedrock) is read as the format it carries.
    if (status >= 300 && wire?.error) ({ status, body } = wire.error(status, body, this.headers));
    else if (status >= 200 && status < 300 && wire?.answer) body = wire.answer(body);
    if (status >= 300 && isRetryableStatus(status)) {
      // Scrubbed before it is cut, so no part of a secret survives at the cut.
      const detail = scrub(body.toString('utf8', 0, Math.min(body.length, DETAIL_SCAN)), a.key, DETAIL_CHARS, a.target.headers);
      return this.finish({ kind: 'failed', status, reason: `upstream answered ${status}`, headers: this.headers, detail });
    }
    const ok = status >= 200 && status < 300;
    const usage = ok ? usageFromBody(body, a.target.format) : null;
    const t = a.translation;
    if (ok && t) {
      let translated: Buffer;
      try {
        translated = t.t.response(body, t.ctx);
      } catch {
        // Not the JSON its format promises: nothing the client could read, and nothing billed.
        a.ex.send(502, JSON_HEAD, proxyErrorBody(a.errorFormat, 502, `The upstream answer could not be read (request ${a.requestId})`, 'upstream_error', a.requestId));
        return this.finish({ kind: 'delivered', status: 502, usage: null, complete: false, streamed: false, events: 0, abnormal: true, clientGone: false });
      }
      const kept = this.kept();
      if (kept) return this.relayOnceKept(kept, status, translated, this.whole(status, usage, body));
      a.ex.relay(status, this.headers, dropped, translated);
    } else if (ok) {
      const id = a.onResponseId && responseIdIn(body.toString('latin1', 0, Math.min(body.length, SNIFF_BYTES)));
      const noted = id ? a.onResponseId!(id) : undefined;
      if (noted) return this.relayOnceKept(noted, status, body, this.whole(status, usage, body));
      a.ex.relay(status, this.headers, dropped, body);
    }
    else relayError(a, status, this.headers, t ? t.t.error(status, body) : body);
    this.finish(this.whole(status, usage, status < 300 ? body : undefined));
  }

  private whole(status: number, usage: TokenUsage | null, body: Buffer | undefined): Delivered {
    return { kind: 'delivered', status, usage, complete: usage !== null, streamed: false, events: 0, abnormal: false, clientGone: false, body };
  }

  /** A completed translated Responses answer handed to `keep`: the promise the answer's end waits for. */
  private kept(): Promise<void> | undefined {
    const t = this.a.translation;
    return t?.keep && t.ctx.completed ? t.keep(t.ctx.completed) : undefined;
  }

  /** A whole answer relayed once what its continuation needs is noted (its key, or its conversation). */
  private relayOnceKept(kept: Promise<void>, status: number, bytes: Buffer, o: Delivered): void {
    const a = this.a;
    kept.then(() => {
      if (a.ex.aborted) return this.finish({ ...o, clientGone: true });
      a.ex.relay(status, this.headers, dropped, bytes);
      this.finish(o);
    });
  }

  onResponseError(_c: ResponseController, err: Error): void {
    const a = this.a;
    if (a.ex.aborted || err === CLIENT_LEFT) return this.finish(this.out?.started ? this.delivered(false, true) : CLIENT_GONE);
    if (!this.out?.started) return this.finish(failure(err));
    // Cut or stalled after the first byte: the client gets an error, never a clean end. The
    // cause (which may name the upstream) goes to the log under the request ID, not to the client.
    const out = this.out;
    const reason = failure(err).reason;
    if (!this.tap) {
      // Audio or plain text has no error event to carry: the client sees the connection fail.
      out.abort();
      return this.finish({ ...this.delivered(true, false), interruption: reason });
    }
    const said = `The upstream stream was interrupted; nothing more will come (request ${a.requestId})`;
    // A translated stream framed its own way (Gemini's JSON array) closes that framing around the error.
    failStream(out, this.tr?.interrupted?.(said, a.requestId) ?? streamErrorEvent(a.errorFormat, said, a.requestId))
      .then(() => this.finish({ ...this.delivered(true, false), interruption: reason }));
  }

  private delivered(abnormal: boolean, clientGone: boolean): Delivered {
    const tap = this.tap;
    if (!tap) return { kind: 'delivered', status: this.status, usage: null, complete: !abnormal && !clientGone, streamed: true, events: 0, abnormal, clientGone, bytes: this.passed };
    return { kind: 'delivered', status: this.status, usage: tap.usage, complete: tap.complete, streamed: true, events: tap.events, abnormal, clientGone, rawUsage: tap.rawUsage };
  }

  private sniff(chunk: Buffer): void {
    const head = this.head + chunk.toString('latin1');
    const id = responseIdIn(head);
    if (id !== undefined) void this.a.onResponseId!(id);
    this.head = id !== undefined || head.length >= SNIFF_BYTES ? null : head;
  }
}
