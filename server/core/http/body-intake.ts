/**
 * The one home of request body intake on uWS, and of its 413/415/400 answers: the REST and
 * tRPC handlers and the AI proxy all take their bodies through here.
 *
 * Nothing here rejects. A body is a promise that always settles — with the bytes, a refusal,
 * or `gone` when the client left before the body ended (or an answer that closes the
 * connection took it over, see answerAfterBody) — so a handler that answers before it reads
 * the body (the proxy's 401) leaves no rejection unobserved, and whoever awaits a body the
 * client abandoned half-way still finishes.
 */
import type { Exchange } from './exchange';
import { unstorableField } from './storable-text';

export interface BodyRefusal { status: number; code: string; message: string }

/** The body's bytes as they arrived, or why there are none. */
export type RawBody =
  | { ok: true; raw: Buffer }
  | { ok: false; refusal: BodyRefusal }
  | { ok: false; gone: true };

export type JsonBody =
  /** `value` is undefined only when the body is empty and not required. */
  | { ok: true; raw: Buffer; value: Record<string, unknown> | undefined }
  | { ok: false; refusal: BodyRefusal }
  | { ok: false; gone: true };

export interface JsonBodyOptions {
  /** An empty body is refused (400) rather than read as no value. */
  required: boolean;
  /**
   * Every string and object key must be storable text (no NUL, no lone surrogate): the admin
   * API stores what it reads. The proxy forwards bodies as they are and leaves this off.
   */
  storableText?: boolean;
}

const EMPTY = Buffer.alloc(0);
const NO_BODY: Promise<RawBody> = Promise.resolve({ ok: true, raw: EMPTY });
const GONE = { ok: false, gone: true } as const;

const refused = (status: number, code: string, message: string) => ({ ok: false as const, refusal: { status, code, message } });
const tooLarge = (max: number) => refused(413, 'body_too_large', `Request body exceeds ${max} bytes`);
const NOT_AN_OBJECT = refused(400, 'invalid_request', 'body: must be a JSON object');

/**
 * Starts taking the body off the connection. Exchange's constructor calls it, because uWS
 * wants `onData` registered before the route handler returns.
 */
export function startBody(ex: Exchange): Promise<RawBody> {
  const h = ex.headers;
  if (ex.conflictingLength) return refuseFraming(ex, 'conflicting_content_length', 'The request has Content-Length headers with different values; send one');
  const te = h['transfer-encoding'];
  if (te !== undefined) {
    if (te.trim().toLowerCase() !== 'chunked') return refuseFraming(ex, 'unsupported_transfer_encoding', `Transfer-Encoding "${te.slice(0, 100)}" is not supported; send the body with Content-Length or Transfer-Encoding: chunked`);
  } else {
    const len = h['content-length'];
    if (len === undefined || len === '0') return NO_BODY;
    if (Number(len) > ex.maxBodyBytes) {
      // uWS still wants a sink for the bytes that may follow.
      ex.bodyDue = true;
      ex.res.onData((_, isLast) => { if (isLast) ex.bodyDue = false; });
      return Promise.resolve(tooLarge(ex.maxBodyBytes));
    }
  }
  ex.bodyDue = true;
  return new Promise((resolve) => {
    const max = ex.maxBodyBytes;
    let first: Buffer | undefined;
    let more: Buffer[] | undefined;
    let size = 0;
    let settled = false;
    const gone = () => {
      if (!settled) { settled = true; resolve(GONE); }
    };
    ex.onAbort(gone);
    ex.stopBody = gone;
    ex.res.onData((chunk, isLast) => {
      if (isLast) ex.bodyDue = false;
      if (settled) return;
      size += chunk.byteLength;
      if (size > max) { settled = true; resolve(tooLarge(max)); return; }
      // Copied: uWS detaches the ArrayBuffer when this callback returns.
      const piece = Buffer.from(new Uint8Array(chunk));
      if (first === undefined) first = piece;
      else (more ??= [first]).push(piece);
      if (isLast) {
        settled = true;
        resolve({ ok: true, raw: more ? Buffer.concat(more, size) : first });
      }
    });
  });
}

function ignore(): void {}

/**
 * How much more of a body is read and dropped, and for how long, before an answer that closes
 * the connection goes out anyway (docs/decisions.md, "Runtime").
 */
export const LINGER_BYTES = 16 * 1024 * 1024;
export const LINGER_MS = 5_000;

/**
 * Sends an answer given while the body is still arriving, on a connection that closes after
 * it (the client's `Connection: close`, or the gateway's own close). Closing a socket with
 * unread bytes makes the kernel reset the connection, and the reset overtakes the answer: a
 * client still sending reads ECONNRESET instead of its 413 or 401. So the rest of the body is
 * read and dropped first, up to LINGER_BYTES more and for up to LINGER_MS, and then the answer
 * goes out and uWS closes a connection with nothing left unread. Past either bound, or at once
 * for a declared length past LINGER_BYTES, the answer goes out all the same. A connection that
 * stays open needs none of this: uWS reads the rest of the body after the answer, as it must
 * to parse the next request.
 */
export function answerAfterBody(ex: Exchange, answer: () => void): void {
  if (Number(ex.headers['content-length']) > LINGER_BYTES) {
    answer();
    return;
  }
  let dropped = 0;
  let timer: NodeJS.Timeout | undefined;
  const go = () => {
    if (timer === undefined) return;
    clearTimeout(timer);
    timer = undefined;
    if (!ex.aborted) answer();
  };
  timer = setTimeout(go, LINGER_MS);
  timer.unref();
  ex.onAbort(() => {
    clearTimeout(timer);
    timer = undefined;
  });
  ex.stopBody?.();
  // Takes the body over from whichever intake read it; an upload may have paused the socket.
  ex.res.onData((chunk, isLast) => {
    dropped += chunk.byteLength;
    if (isLast) ex.bodyDue = false;
    if (isLast || dropped > LINGER_BYTES) go();
  });
  if (ex.upload) ex.res.resume();
}

/**
 * A request whose body cannot be framed is refused with 400 and a closed connection (RFC
 * 9112 §6.1 and §6.3): a Transfer-Encoding other than chunked (uWS frames any as chunked, so
 * `identity`, or `gzip, chunked` still compressed, cannot be read) and Content-Length lines
 * that disagree (uWS frames by the first). The answer must leave before the handler returns:
 * when the bytes after the head do not parse as uWS frames them, uWS answers its own HTML
 * page and closes right after, dropping whatever still sits in its 16 KiB cork buffer. An
 * answer larger than that buffer is written straight to the socket, so the body is padded
 * with JSON whitespace past it (a rare answer; the bytes are the price of a readable reason).
 * It is in the route's error format (`ex.errorBody`), as the route's other refusals are.
 */
function refuseFraming(ex: Exchange, code: string, message: string): Promise<RawBody> {
  ex.res.onData(ignore);
  ex.send(400, { 'content-type': 'application/json' }, ex.errorBody(400, message, code) + PAST_CORK_BUFFER, true);
  return Promise.resolve(refused(400, code, message));
}

const PAST_CORK_BUFFER = '\n' + ' '.repeat(16 * 1024);

/**
 * The body as a JSON object, or why not: 413 body_too_large, 415 unsupported_media_type
 * (a non-empty body whose content-type is not application/json), 400 invalid_json, 400
 * invalid_request (not an object; empty when required; with `storableText`, a NUL or lone
 * surrogate, naming the field), 400 unsupported_transfer_encoding or conflicting_content_length
 * (already answered, see refuseFraming), or `gone`.
 */
export function readJsonObject(ex: Exchange, opts: JsonBodyOptions): Promise<JsonBody> {
  return ex.body().then((body) => (body.ok ? jsonObjectOf(ex, body.raw, opts) : body));
}

function jsonObjectOf(ex: Exchange, raw: Buffer, opts: JsonBodyOptions): JsonBody {
  if (raw.length === 0) return opts.required ? NOT_AN_OBJECT : { ok: true, raw, value: undefined };
  const type = ex.headers['content-type'];
  if (type === undefined || !JSON_TYPE.test(type)) {
    return refused(415, 'unsupported_media_type', type ? `Unsupported content-type "${type.slice(0, 100)}"; send application/json` : 'Missing content-type header; send application/json');
  }
  let doc: unknown;
  try {
    doc = JSON.parse(raw.toString('utf8'));
  } catch (err) {
    return refused(400, 'invalid_json', `Malformed JSON body: ${(err as Error).message}`);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return NOT_AN_OBJECT;
  // A NUL or a lone surrogate can only arrive as a \u escape (raw ones are invalid JSON or
  // invalid UTF-8), so a body without one is not walked.
  if (opts.storableText && raw.includes(ESCAPE)) {
    const problem = unstorableField(doc);
    if (problem) return refused(400, 'invalid_request', problem);
  }
  return { ok: true, raw, value: doc as Record<string, unknown> };
}

/** Answers a body that was not taken; nothing is left to answer when the client went away. */
export function refuse(ex: Exchange, body: { ok: false; refusal: BodyRefusal } | { ok: false; gone: true }): void {
  if ('refusal' in body) ex.sendError(body.refusal.status, body.refusal.message, body.refusal.code);
}

const JSON_TYPE = /^\s*application\/json\s*(;|$)/i;
const ESCAPE = Buffer.from('\\u');
