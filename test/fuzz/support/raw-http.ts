import net from 'node:net';

/**
 * HTTP/1.1 over a bare socket, for what fetch and undici refuse to send: lying
 * Content-Lengths, broken chunking, odd Transfer-Encodings, huge heads, pipelining,
 * half-sent requests. Reads back every response the server writes.
 */

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

export interface RawOutcome {
  responses: RawResponse[];
  /**
   * `answered`: the expected responses arrived (we closed); `closed`: the server ended the
   * connection; `reset`: it reset it; `waited`: nothing more came within the wait (we closed);
   * `refused`: no connection at all.
   */
  ending: 'answered' | 'closed' | 'reset' | 'waited' | 'refused';
  /** Bytes after the last complete response (a response cut short). */
  partial: number;
  ms: number;
}

/** A piece to write, or a pause between writes. */
export type RawPiece = string | Buffer | { pauseMs: number };

export interface RawOptions {
  /** Stop once this many final (non-1xx) responses arrived. */
  responses?: number;
  /** Longest wait after the last write for the rest of the answer. */
  waitMs: number;
  /** Methods of the requests in order, so a HEAD response is known to have no body. */
  methods?: string[];
  /** Half-close our side after the last write (FIN), as a client that has nothing more to send. */
  endAfterWrite?: boolean;
}

export function rawExchange(port: number, pieces: RawPiece[], opts: RawOptions): Promise<RawOutcome> {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const socket = net.connect({ port, host: '127.0.0.1' });
    socket.setNoDelay(true);
    let buf = Buffer.alloc(0);
    const responses: RawResponse[] = [];
    let consumed = 0;
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    let connected = false;

    const finish = (ending: RawOutcome['ending']) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ responses, ending, partial: buf.length - consumed, ms: Date.now() - t0 });
    };
    const finalCount = () => responses.filter((r) => r.status >= 200).length;

    socket.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      for (;;) {
        const method = opts.methods?.[finalCount()] ?? 'POST';
        const parsed = parseResponse(buf, consumed, method, false);
        if (!parsed) break;
        responses.push(parsed.response);
        consumed = parsed.end;
      }
      if (opts.responses !== undefined && finalCount() >= opts.responses) finish('answered');
    });
    socket.on('end', () => {
      // A body delimited by the close is complete now.
      const method = opts.methods?.[finalCount()] ?? 'POST';
      const parsed = parseResponse(buf, consumed, method, true);
      if (parsed) {
        responses.push(parsed.response);
        consumed = parsed.end;
      }
      finish('closed');
    });
    socket.on('error', (err: NodeJS.ErrnoException) => finish(!connected ? 'refused' : err.code === 'ECONNRESET' || err.code === 'EPIPE' ? 'reset' : 'closed'));
    socket.on('close', () => finish('closed'));
    socket.on('connect', async () => {
      connected = true;
      for (const p of pieces) {
        if (settled) return;
        if (typeof p === 'object' && !Buffer.isBuffer(p)) {
          await new Promise((r) => setTimeout(r, p.pauseMs));
          continue;
        }
        const ok = socket.write(p);
        if (!ok) await new Promise<void>((r) => { socket.once('drain', r); socket.once('close', r); });
      }
      if (settled) return;
      if (opts.endAfterWrite) socket.end();
      timer = setTimeout(() => finish('waited'), opts.waitMs);
    });
  });
}

const CRLFCRLF = Buffer.from('\r\n\r\n');

/** One complete response starting at `from`, or null when more bytes are needed. */
export function parseResponse(buf: Buffer, from: number, method: string, atEof: boolean): { response: RawResponse; end: number } | null {
  const headEnd = buf.indexOf(CRLFCRLF, from);
  if (headEnd < 0) return null;
  const head = buf.subarray(from, headEnd).toString('latin1').split('\r\n');
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(head[0]);
  if (!m) throw new Error(`not an HTTP response: ${JSON.stringify(head[0].slice(0, 80))}`);
  const status = Number(m[1]);
  const headers: Record<string, string> = {};
  for (const line of head.slice(1)) {
    const i = line.indexOf(':');
    if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  let at = headEnd + 4;
  const noBody = method === 'HEAD' || status < 200 || status === 204 || status === 304;
  if (noBody) return { response: { status, headers, body: Buffer.alloc(0) }, end: at };
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
    const parts: Buffer[] = [];
    for (;;) {
      const lineEnd = buf.indexOf('\r\n', at);
      if (lineEnd < 0) return null;
      const size = parseInt(buf.subarray(at, lineEnd).toString('latin1'), 16);
      if (!Number.isFinite(size)) throw new Error('bad chunk size in response');
      at = lineEnd + 2;
      if (size === 0) {
        const trailerEnd = buf.indexOf('\r\n', at);
        if (trailerEnd < 0) return null;
        // Trailers end with an empty line; we ask for none, so expect it at once.
        return { response: { status, headers, body: Buffer.concat(parts) }, end: trailerEnd + 2 };
      }
      if (buf.length < at + size + 2) return null;
      parts.push(buf.subarray(at, at + size));
      at += size + 2;
    }
  }
  const len = headers['content-length'];
  if (len !== undefined) {
    const n = Number(len);
    if (buf.length < at + n) return null;
    return { response: { status, headers, body: buf.subarray(at, at + n) }, end: at + n };
  }
  if (!atEof) return null;
  return { response: { status, headers, body: buf.subarray(at) }, end: buf.length };
}

/** A request head: request line, headers in order (duplicates allowed), blank line. */
export function requestHead(method: string, target: string, headers: [string, string][], version = 'HTTP/1.1'): string {
  return `${method} ${target} ${version}\r\n${headers.map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`;
}

/** A chunked body: the pieces as chunks, then the last chunk (optionally with trailers). */
export function chunked(pieces: (string | Buffer)[], opts: { extension?: string; trailers?: string[]; upperHex?: boolean } = {}): Buffer {
  const out: Buffer[] = [];
  for (const p of pieces) {
    const b = typeof p === 'string' ? Buffer.from(p) : p;
    if (b.length === 0) continue;
    const size = opts.upperHex ? b.length.toString(16).toUpperCase() : b.length.toString(16);
    out.push(Buffer.from(`${size}${opts.extension ?? ''}\r\n`), b, Buffer.from('\r\n'));
  }
  out.push(Buffer.from(`0\r\n${(opts.trailers ?? []).map((t) => `${t}\r\n`).join('')}\r\n`));
  return Buffer.concat(out);
}
