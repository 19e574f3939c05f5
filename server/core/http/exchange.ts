import type { HttpRequest, HttpResponse } from './uws';
import { errorType, defaultCode } from '../../../contract/errors';
import { answerAfterBody, startBody, type RawBody } from './body-intake';
import { UploadBody } from './upload';

const decoder = new TextDecoder();

/** The body of an error answer: the gateway envelope unless a route speaks another format (Anthropic's on /v1/messages). */
export type ErrorBody = (status: number, message: string, code: string) => string;

export const envelopeBody: ErrorBody = (status, message, code) => JSON.stringify(errorEnvelope(status, message, code));

/** Where a stamp writes its headers (a uWS response is one). */
export interface HeadWriter {
  writeHeader(name: string, value: string): unknown;
}

/**
 * Headers a route adds to whatever answer goes out, written as the head is (request ID, the
 * gateway's own time), whichever way the answer is sent: whole, relayed or streamed.
 */
export interface ResponseStamp {
  stampHead(status: number, head: HeadWriter): void;
}

/**
 * One HTTP request/response pair on uWS. Everything is read from the HttpRequest up front,
 * because uWS invalidates it as soon as the handler returns or awaits.
 */
export class Exchange {
  readonly method: string;
  readonly path: string;
  readonly query: string;
  readonly headers: Record<string, string> = {};
  /**
   * The request's Content-Length lines disagree. uWS frames the body by the first line and
   * never says there was another; RFC 9112 §6.3 makes such a message invalid (a front proxy
   * that framed it by the other line would see a different request: smuggling).
   */
  readonly conflictingLength: boolean = false;
  /** The client asked for the connection to close after the answer (`Connection: close`). */
  readonly closeRequested: boolean = false;
  /**
   * More of the request body is still to come and will be read: set by the body intake while
   * it reads one, cleared at its last byte (see answerAfterBody).
   */
  bodyDue = false;
  /** Set by the body intake while it reads a body: settles that body as gone when an answer takes the connection over. */
  stopBody: (() => void) | null = null;
  private remoteIp: string | undefined;
  aborted = false;
  finished = false;
  /** Written into the head of the answer, whichever it is. */
  stamp: ResponseStamp | null = null;
  private abortListeners: (() => void)[] = [];
  /** Clean ends waiting for the release of `holdEnd`; null while the end is not held. */
  private heldEnds: (() => void)[] | null = null;
  private readonly bodyRead: Promise<RawBody>;
  /** The body as a stream, on a route that takes uploads (see upload.ts); null elsewhere. */
  readonly upload: UploadBody | null = null;

  /**
   * `headerNames` (lower case) limits the headers kept to those the route uses: a hot route
   * then skips copying every header a client SDK sends. A repeated header's values are joined
   * with `, ` (RFC 9110 §5.3). `errorBody` shapes the answers the intake gives by itself.
   * With `uploadLimit` the body is not read whole but streamed (`upload`), up to that many bytes.
   */
  constructor(readonly res: HttpResponse, req: HttpRequest, readonly maxBodyBytes: number, headerNames?: readonly string[], readonly errorBody: ErrorBody = envelopeBody, uploadLimit?: number) {
    this.method = req.getCaseSensitiveMethod().toUpperCase();
    this.path = req.getUrl();
    this.query = req.getQuery() ?? '';
    const keep = headerNames ? wanted(headerNames) : undefined;
    const h = this.headers;
    let length: string | undefined;
    let conflict = false;
    let close = false;
    // Every line, even on the hot path: only forEach sees a second Content-Length.
    req.forEach((k, v) => {
      if (k === 'content-length') {
        if (length === undefined) length = v;
        else if (v !== length) conflict = true;
        // Equal repeats are one value (RFC 9112 §6.3 lets a recipient take it).
        h[k] = length;
        return;
      }
      if (k === 'connection' && /(^|,)\s*close\s*(,|$)/i.test(v)) close = true;
      if (keep && !keep.has(k)) return;
      h[k] = h[k] === undefined ? v : `${h[k]}, ${v}`;
    });
    this.conflictingLength = conflict;
    this.closeRequested = close;
    res.onAborted(() => {
      this.aborted = true;
      for (const l of this.abortListeners) l();
    });
    if (uploadLimit !== undefined && !conflict && (h['transfer-encoding'] === undefined || h['transfer-encoding'].trim().toLowerCase() === 'chunked')) {
      this.upload = new UploadBody(res, h, uploadLimit, (l) => this.onAbort(l));
      this.bodyRead = UPLOADED;
    } else this.bodyRead = startBody(this);
  }

  onAbort(listener: () => void): void {
    if (this.aborted) listener();
    else this.abortListeners.push(listener);
  }

  /**
   * Holds the answer's clean end (a whole answer, a streamed answer's last bytes) until the
   * returned function is called: what ends the call for its client can wait for something the
   * client must find done when it calls again (the proxy: what the call held is given back in
   * shared state). Everything before the end still goes out as it comes; `finished` is set at
   * once; an end held when the client leaves is dropped.
   */
  holdEnd(): () => void {
    const held: (() => void)[] = [];
    this.heldEnds = held;
    return () => {
      if (this.heldEnds !== held) return;
      this.heldEnds = null;
      for (const end of held) end();
    };
  }

  /** Runs a clean end now, or once `holdEnd` releases it; never after the client left. */
  atEnd(end: () => void): void {
    const held = this.heldEnds;
    if (held) held.push(() => { if (!this.aborted) end(); });
    else end();
  }

  /** The peer's address, read when first asked for (most requests never need it); '' once the client left. */
  get ip(): string {
    if (this.remoteIp === undefined) {
      if (this.aborted) return '';
      const ip = decoder.decode(this.res.getRemoteAddressAsText());
      this.remoteIp = ip.startsWith('::ffff:') ? ip.slice(7) : ip;
    }
    return this.remoteIp;
  }

  get url(): string {
    return this.query ? `${this.path}?${this.query}` : this.path;
  }

  /** The request body as it arrived (empty when none was sent), or why not; never rejects (body-intake.ts). */
  body(): Promise<RawBody> {
    return this.bodyRead;
  }

  /**
   * Writes a whole response in one corked batch; a no-op once the client went away. A HEAD
   * request gets the head GET would (its content-length included) and no body. An answer
   * that closes the connection while the body is still arriving waits for it (answerAfterBody).
   */
  send(status: number, headers: Record<string, string>, body: string | Uint8Array, closeConnection = false): void {
    if (this.aborted || this.finished) return;
    this.finished = true;
    const answer = () => this.res.cork(() => {
      this.res.writeStatus(statusLine(status));
      this.stamp?.stampHead(status, this.res);
      for (const k in headers) this.res.writeHeader(k, headers[k]);
      if (this.method === 'HEAD') endHead(this.res, typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength, closeConnection);
      else this.res.end(body, closeConnection);
    });
    if ((closeConnection || this.closeRequested) && (this.upload ? !this.upload.ended : this.bodyDue)) answerAfterBody(this, answer);
    else this.atEnd(answer);
  }

  sendJson(status: number, body: unknown, headers: Record<string, string> = {}, closeConnection = false): void {
    this.send(status, { 'content-type': 'application/json', ...headers }, JSON.stringify(body), closeConnection);
  }

  sendError(status: number, message: string, code?: string, headers: Record<string, string> = {}, closeConnection = false): void {
    this.sendJson(status, errorEnvelope(status, message, code), headers, closeConnection);
  }
}

/** An exchange whose body is an upload has none to read whole. */
const UPLOADED: Promise<RawBody> = Promise.resolve({ ok: true, raw: Buffer.alloc(0) });

const wantedSets = new WeakMap<readonly string[], ReadonlySet<string>>();
/** The route's header names as a set, made once per list. */
function wanted(names: readonly string[]): ReadonlySet<string> {
  let set = wantedSets.get(names);
  if (!set) wantedSets.set(names, (set = new Set(names)));
  return set;
}

/**
 * Ends a HEAD answer with the content-length GET would have sent. Not through
 * `endWithoutBody(length)`: the Node 20 binary of the uWS build in use leaves the response
 * open after it (and aborts the process when no onAborted handler is attached).
 */
export function endHead(res: HttpResponse, contentLength: number, closeConnection = false): void {
  res.writeHeader('content-length', String(contentLength));
  // The client closes on this header; `endWithoutBody(undefined, true)` has the same flaw.
  if (closeConnection) res.writeHeader('connection', 'close');
  res.endWithoutBody();
}

export function errorEnvelope(status: number, message: string, code?: string) {
  return { error: { message, type: errorType(status), code: code ?? defaultCode(status) } };
}

const reasons: Record<number, string> = {
  200: 'OK', 201: 'Created', 204: 'No Content', 302: 'Found', 301: 'Moved Permanently', 304: 'Not Modified', 400: 'Bad Request', 401: 'Unauthorized',
  402: 'Payment Required', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed', 408: 'Request Timeout',
  409: 'Conflict', 413: 'Payload Too Large', 415: 'Unsupported Media Type', 422: 'Unprocessable Entity',
  429: 'Too Many Requests', 499: 'Client Closed Request', 500: 'Internal Server Error', 502: 'Bad Gateway',
  503: 'Service Unavailable', 504: 'Gateway Timeout',
};
const statusLines = new Map<number, string>();
export function statusLine(status: number): string {
  let line = statusLines.get(status);
  if (!line) {
    line = `${status} ${reasons[status] ?? 'Status'}`;
    statusLines.set(status, line);
  }
  return line;
}
