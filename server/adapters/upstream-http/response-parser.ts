/** Response headers with lower-case names; a repeated header becomes an array. */
export type ResponseHeaders = Record<string, string | string[]>;

export interface ResponseEvents {
  onHead(status: number, headers: ResponseHeaders): void;
  /** A piece of the (de-chunked) body; a view into the socket's buffer, which is never reused. */
  onData(chunk: Buffer): void;
  onEnd(): void;
}

/** The upstream broke HTTP/1.1: the connection cannot be trusted for another request. */
export class ResponseParseError extends Error {}

/** Bounds a well-behaved upstream never reaches; past them the response is refused. */
const MAX_HEAD_BYTES = 64 * 1024;
const MAX_CHUNK_LINE = 1024;

const CRLF = Buffer.from('\r\n');
const HEAD_END = Buffer.from('\r\n\r\n');
const STATUS_LINE = /^HTTP\/1\.([01]) (\d{3})(?: |$)/;
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Control characters but tab: a lone CR or LF in a value would become a header line of its own downstream. */
const CONTROL = /[\0-\x08\x0a-\x1f\x7f]/;
const DIGITS = /^\d+$/;

const enum State { Head, Length, ChunkSize, ChunkData, ChunkEnd, Trailers, UntilClose, Done }

/**
 * An incremental HTTP/1.1 response parser for one request at a time on a keep-alive
 * connection: status line and headers, then a body delimited by Content-Length, by chunked
 * transfer coding, or by the connection's end. 1xx interim responses are skipped.
 */
export class ResponseParser {
  private state = State.Head;
  /** Bytes of an unfinished head, chunk-size line or trailer section. */
  private pending: Buffer | null = null;
  private remaining = 0;
  private halted = false;
  /** The upstream asked to close after this response, or spoke HTTP/1.0 without keep-alive. */
  keepAlive = true;
  /** `keep-alive: timeout=N` from the upstream, in ms; 0 when it gave none. */
  keepAliveHintMs = 0;

  constructor(private readonly events: ResponseEvents, private readonly expectBody = true) {}

  get done(): boolean {
    return this.state === State.Done;
  }

  /** The response began: bytes of it arrived. */
  get started(): boolean {
    return this.state !== State.Head || this.pending !== null;
  }

  /** Feeds bytes from the socket. Bytes past the end of the response make the connection unusable. */
  execute(buf: Buffer): void {
    let at = 0;
    while (at < buf.length && !this.halted) {
      switch (this.state) {
        case State.Head: at = this.head(buf, at); break;
        case State.Length: {
          const piece = this.take(buf, at);
          at += piece.length;
          this.events.onData(piece);
          if (this.remaining === 0 && !this.halted) this.complete();
          break;
        }
        case State.ChunkSize: at = this.chunkSize(buf, at); break;
        case State.ChunkData: {
          const piece = this.take(buf, at);
          at += piece.length;
          if (this.remaining === 0) this.state = State.ChunkEnd;
          this.events.onData(piece);
          break;
        }
        case State.ChunkEnd: at = this.chunkEnd(buf, at); break;
        case State.Trailers: at = this.trailers(buf, at); break;
        case State.UntilClose:
          this.events.onData(at === 0 ? buf : buf.subarray(at));
          at = buf.length;
          break;
        case State.Done:
          // Nothing was asked for: a confused upstream, or one smuggling a response in.
          this.keepAlive = false;
          return;
      }
    }
  }

  /** The next piece of a sized part of the body: as much of the `remaining` bytes as `buf` holds. */
  private take(buf: Buffer, at: number): Buffer {
    const n = Math.min(this.remaining, buf.length - at);
    this.remaining -= n;
    return buf.subarray(at, at + n);
  }

  /** Stops delivering events (the request was aborted); the connection is not reused. */
  halt(): void {
    this.halted = true;
    this.keepAlive = false;
  }

  /** The connection ended: completes a close-delimited body, or says the response was cut. */
  end(): void {
    if (this.state === State.Done || this.halted) return;
    if (this.state === State.UntilClose) {
      this.keepAlive = false;
      return this.complete();
    }
    throw new ResponseParseError(this.started ? 'the upstream closed the connection in the middle of its response' : 'the upstream closed the connection without answering');
  }

  private complete(): void {
    this.state = State.Done;
    this.events.onEnd();
  }

  /** Reads up to the end of the head; returns the offset after what it used. */
  private head(buf: Buffer, at: number): number {
    let data = buf;
    let from = at;
    let searchFrom = at;
    if (this.pending) {
      searchFrom = Math.max(0, this.pending.length - 3);
      data = Buffer.concat([this.pending, buf.subarray(at)]);
      from = 0;
    }
    const end = data.indexOf(HEAD_END, searchFrom);
    if ((end === -1 ? data.length : end) - from > MAX_HEAD_BYTES) throw new ResponseParseError('the upstream sent response headers larger than 64 KiB');
    if (end === -1) {
      this.pending = from === 0 && data !== buf ? data : Buffer.from(data.subarray(from));
      return buf.length;
    }
    const consumedOfBuf = this.pending ? end + 4 - this.pending.length : end + 4 - at;
    this.pending = null;
    this.parseHead(data.toString('latin1', from, end));
    return at + consumedOfBuf;
  }

  private parseHead(text: string): void {
    const lines = text.split('\r\n');
    const m = STATUS_LINE.exec(lines[0]);
    if (!m) throw new ResponseParseError(`the upstream answered with an invalid status line: ${JSON.stringify(lines[0].slice(0, 80))}`);
    const http10 = m[1] === '0';
    const status = Number(m[2]);
    const headers: ResponseHeaders = {};
    let last = '';
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i];
      if (CONTROL.test(line)) throw new ResponseParseError('the upstream sent a control character in a header');
      const c0 = line.charCodeAt(0);
      if (c0 === 0x20 || c0 === 0x09) {
        // obs-fold: a continuation of the previous header, replaced by a space (RFC 9112 §5.2).
        if (!last) throw new ResponseParseError('the upstream sent a folded header line without a header');
        const prev = headers[last];
        if (typeof prev === 'string') headers[last] = `${prev} ${line.trim()}`;
        else prev[prev.length - 1] = `${prev[prev.length - 1]} ${line.trim()}`;
        continue;
      }
      const colon = line.indexOf(':');
      if (colon <= 0) throw new ResponseParseError(`the upstream sent an invalid header line: ${JSON.stringify(line.slice(0, 80))}`);
      const name = line.slice(0, colon).toLowerCase();
      if (!TOKEN.test(name)) throw new ResponseParseError(`the upstream sent an invalid header name: ${JSON.stringify(name.slice(0, 40))}`);
      const value = line.slice(colon + 1).trim();
      const prev = headers[name];
      if (prev === undefined) headers[name] = value;
      else if (typeof prev === 'string') headers[name] = [prev, value];
      else prev.push(value);
      last = name;
    }
    if (status < 200) {
      // 100 Continue, 103 Early Hints: the real response follows. 101 would switch protocols.
      if (status === 101) throw new ResponseParseError('the upstream switched protocols');
      return;
    }
    this.connectionHeaders(headers, http10);
    this.events.onHead(status, headers);
    if (this.halted) return;
    this.bodyFraming(status, headers);
  }

  private connectionHeaders(headers: ResponseHeaders, http10: boolean): void {
    const conn = headers.connection === undefined ? [] : joined(headers.connection).toLowerCase().split(',').map((t) => t.trim());
    this.keepAlive = http10 ? conn.includes('keep-alive') : !conn.includes('close');
    const hint = /timeout=(\d+)/i.exec(joined(headers['keep-alive']));
    if (hint) this.keepAliveHintMs = Number(hint[1]) * 1000;
  }

  private bodyFraming(status: number, headers: ResponseHeaders): void {
    if (!this.expectBody || status === 204 || status === 304) return this.complete();
    const te = headers['transfer-encoding'];
    if (te !== undefined) {
      const codings = joined(te).toLowerCase().split(',').map((s) => s.trim());
      if (codings[codings.length - 1] === 'chunked') {
        this.state = State.ChunkSize;
        return;
      }
      this.keepAlive = false;
      this.state = State.UntilClose;
      return;
    }
    const cl = headers['content-length'];
    if (cl !== undefined) {
      const values = (typeof cl === 'string' ? cl.split(',') : cl.flatMap((v) => v.split(','))).map((v) => v.trim());
      const n = Number(values[0]);
      if (!values.every((v) => DIGITS.test(v) && Number(v) === n) || !Number.isSafeInteger(n)) {
        throw new ResponseParseError(`the upstream sent an invalid Content-Length: ${JSON.stringify(joined(cl).slice(0, 40))}`);
      }
      if (n === 0) return this.complete();
      this.remaining = n;
      this.state = State.Length;
      return;
    }
    this.keepAlive = false;
    this.state = State.UntilClose;
  }

  /** A line ending in CRLF starting at `at` (with what is pending), or null when incomplete. */
  private line(buf: Buffer, at: number, what: string): { text: string; next: number } | null {
    const nl = buf.indexOf(CRLF, at);
    if (nl === -1) {
      const piece = buf.subarray(at);
      this.pending = this.pending ? Buffer.concat([this.pending, piece]) : Buffer.from(piece);
      if (this.pending.length > MAX_CHUNK_LINE) throw new ResponseParseError(`the upstream sent a ${what} line longer than ${MAX_CHUNK_LINE} bytes`);
      return null;
    }
    let text = buf.toString('latin1', at, nl);
    if (this.pending) {
      text = this.pending.toString('latin1') + text;
      this.pending = null;
    }
    if (text.length > MAX_CHUNK_LINE) throw new ResponseParseError(`the upstream sent a ${what} line longer than ${MAX_CHUNK_LINE} bytes`);
    return { text, next: nl + 2 };
  }

  private chunkSize(buf: Buffer, at: number): number {
    if (this.pending && this.pending[this.pending.length - 1] === 0x0d && buf[at] === 0x0a) {
      const text = this.pending.toString('latin1', 0, this.pending.length - 1);
      this.pending = null;
      this.chunkHeader(text);
      return at + 1;
    }
    const l = this.line(buf, at, 'chunk-size');
    if (!l) return buf.length;
    this.chunkHeader(l.text);
    return l.next;
  }

  private chunkHeader(text: string): void {
    const semi = text.indexOf(';');
    const hex = (semi === -1 ? text : text.slice(0, semi)).trim();
    if (!/^[0-9a-fA-F]{1,12}$/.test(hex)) throw new ResponseParseError(`the upstream sent an invalid chunk size: ${JSON.stringify(hex.slice(0, 20))}`);
    const size = parseInt(hex, 16);
    if (size === 0) {
      this.state = State.Trailers;
      return;
    }
    this.remaining = size;
    this.state = State.ChunkData;
  }

  private chunkEnd(buf: Buffer, at: number): number {
    // CRLF after the data, possibly split across reads.
    const need = this.pending ? 1 : 2;
    if (buf.length - at < need) {
      if (buf[at] !== 0x0d) throw new ResponseParseError('the upstream sent a chunk without its closing CRLF');
      this.pending = Buffer.from('\r');
      return buf.length;
    }
    const ok = this.pending ? buf[at] === 0x0a : buf[at] === 0x0d && buf[at + 1] === 0x0a;
    if (!ok) throw new ResponseParseError('the upstream sent a chunk longer than its size');
    this.pending = null;
    this.state = State.ChunkSize;
    return at + need;
  }

  private trailers(buf: Buffer, at: number): number {
    // Trailer fields are read and dropped; an empty line ends the message.
    for (;;) {
      if (this.pending && this.pending[this.pending.length - 1] === 0x0d && buf[at] === 0x0a) {
        const empty = this.pending.length === 1;
        this.pending = null;
        at += 1;
        if (empty) {
          this.complete();
          return at;
        }
        continue;
      }
      const l = this.line(buf, at, 'trailer');
      if (!l) return buf.length;
      at = l.next;
      if (l.text === '') {
        this.complete();
        return at;
      }
    }
  }
}

const joined = (v: string | string[] | undefined) => (v === undefined ? '' : typeof v === 'string' ? v : v.join(', '));
