import net from 'node:net';
import tls from 'node:tls';
import { ResponseParseError, ResponseParser, type ResponseEvents, type ResponseHeaders } from './response-parser';
import { requestBytes } from './request-head';
import { UpstreamHttpError, type ResponseController, type ResponseHandler, type UpstreamRequest } from './types';

/** Where a connection goes and how it is kept; one per origin. */
export interface SiteOptions {
  host: string;
  port: number;
  tls: boolean;
  /** The Host header: `host` or `host:port`. */
  hostHeader: string;
  connectTimeoutMs: number;
  /** Longest idle time of a kept connection; an upstream's `keep-alive: timeout` may shorten it. */
  keepAliveMs: number;
  tlsOptions?: tls.ConnectionOptions;
}

/** The origin's pool, told when a connection is free again or gone. */
export interface ConnectionOwner {
  readonly options: SiteOptions;
  released(conn: UpstreamConnection): void;
  removed(conn: UpstreamConnection): void;
}

/**
 * One request's life: queued, then on a connection. It is the handler's controller, so a
 * late `abort` or `resume` from a handler whose request is over touches nothing.
 */
export class UpstreamCall implements ResponseController, ResponseEvents {
  conn: UpstreamConnection | null = null;
  over = false;
  readonly parser: ResponseParser;
  /** Body pieces parsed from the current socket read, not yet handed over. */
  private pieces: Buffer[] | null = null;

  constructor(readonly req: UpstreamRequest, readonly handler: ResponseHandler, private readonly dequeue: (call: UpstreamCall) => void) {
    this.parser = new ResponseParser(this);
  }

  pause(): void {
    if (!this.over) this.conn?.pauseReading();
  }

  resume(): void {
    if (!this.over) this.conn?.resumeReading(this.req.bodyTimeout);
  }

  abort(reason: Error): void {
    if (this.over) return;
    if (this.conn) return this.conn.fail(reason);
    this.dequeue(this);
    this.error(reason);
  }

  /** Ends the call with an error; the handler hears of it once. */
  error(err: Error): void {
    if (this.over) return;
    this.over = true;
    this.parser.halt();
    this.handler.onResponseError(this, err);
  }

  onHead(status: number, headers: ResponseHeaders): void {
    this.conn!.bodyPhase(this.req.bodyTimeout, this.req.firstByteTimeout);
    this.handler.onResponseStart(this, status, headers);
  }

  onData(chunk: Buffer): void {
    if (this.conn!.awaitingFirstByte) this.conn!.bodyPhase(this.req.bodyTimeout);
    (this.pieces ??= []).push(chunk);
  }

  /**
   * Hands over what one socket read held as one piece: an event stream's chunks then cost
   * the client one write instead of one each.
   */
  flush(): void {
    const p = this.pieces;
    if (!p) return;
    this.pieces = null;
    if (!this.over) this.handler.onResponseData(this, p.length === 1 ? p[0] : Buffer.concat(p));
  }

  onEnd(): void {
    this.flush();
    if (this.over) return;
    this.over = true;
    this.conn!.responseEnded();
    this.handler.onResponseEnd(this);
  }
}

type Phase = 'connect' | 'head' | 'body' | 'idle';

/** Settles when the socket drained its write buffer, or closed. */
function drained(s: net.Socket): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      s.off('drain', done);
      s.off('close', done);
      resolve();
    };
    s.once('drain', done);
    s.once('close', done);
  });
}

const socketError = (err: NodeJS.ErrnoException) => new UpstreamHttpError('UPSTREAM_SOCKET', err.code ? `${err.code}: ${err.message}` : err.message);

/**
 * One keep-alive connection to an upstream, one request at a time. Timeouts are the
 * socket's own inactivity timer, re-armed per phase: connecting, waiting for the head,
 * between body pieces, and idle in the pool.
 */
export class UpstreamConnection {
  readonly socket: net.Socket;
  private call: UpstreamCall | null = null;
  private phase: Phase = 'connect';
  private connected = false;
  private closed = false;
  private keepAliveMs: number;
  /** Responses completed on this connection. */
  private served = 0;
  /** When the current request was written (for its first-byte deadline). */
  private sentAt = 0;
  /** The head arrived, no body yet, and the request has a first-byte deadline. */
  awaitingFirstByte = false;

  constructor(private readonly owner: ConnectionOwner, first: UpstreamCall) {
    const o = owner.options;
    this.keepAliveMs = o.keepAliveMs;
    this.socket = o.tls
      ? tls.connect({ host: o.host, port: o.port, servername: net.isIP(o.host) ? undefined : o.host, ALPNProtocols: ['http/1.1'], ...o.tlsOptions })
      : net.connect({ host: o.host, port: o.port });
    const s = this.socket;
    s.setNoDelay(true);
    s.setTimeout(o.connectTimeoutMs);
    s.once(o.tls ? 'secureConnect' : 'connect', () => {
      this.connected = true;
      if (this.call) this.write(this.call);
    });
    s.on('data', (b: Buffer) => this.onData(b));
    s.on('end', () => this.onEnd());
    s.on('error', (err) => this.fail(socketError(err)));
    s.on('close', () => this.onClose());
    s.on('timeout', () => this.onTimeout());
    this.start(first);
  }

  /** Sends a call on this connection (it is free). */
  start(call: UpstreamCall): void {
    this.call = call;
    call.conn = this;
    if (this.phase === 'idle') this.socket.ref();
    if (this.connected) this.write(call);
  }

  /** Ends the call under way with an error and closes the connection: it may be mid-response. */
  fail(err: Error): void {
    const call = this.call;
    this.call = null;
    if (call && this.served > 0 && !call.parser.started && err instanceof UpstreamHttpError && err.code === 'UPSTREAM_SOCKET') err.staleConnection = true;
    this.destroy();
    call?.error(err);
  }

  /** Arms the body's silence timer; with a first-byte deadline, the first piece must come before it. */
  bodyPhase(timeoutMs: number, firstByteTimeoutMs?: number): void {
    this.phase = 'body';
    if (firstByteTimeoutMs !== undefined && firstByteTimeoutMs > 0) {
      this.awaitingFirstByte = true;
      const left = firstByteTimeoutMs - (Date.now() - this.sentAt);
      this.socket.setTimeout(Math.max(1, timeoutMs > 0 ? Math.min(left, timeoutMs) : left));
      return;
    }
    this.awaitingFirstByte = false;
    this.socket.setTimeout(timeoutMs);
  }

  /** Backpressure: a slow client is not the upstream's silence, so the idle timer stops too. */
  pauseReading(): void {
    this.socket.pause();
    if (this.phase === 'body') this.socket.setTimeout(0);
  }

  resumeReading(bodyTimeoutMs: number): void {
    if (this.phase === 'body') this.socket.setTimeout(bodyTimeoutMs);
    this.socket.resume();
  }

  /** The response is complete (the parser may still be in the middle of the socket's buffer). */
  responseEnded(): void {
    this.call = null;
  }

  private write(call: UpstreamCall): void {
    let bytes: Buffer[];
    try {
      bytes = requestBytes(call.req, this.owner.options.hostHeader);
    } catch (err) {
      // Nothing was written: the connection stays good for the next request.
      this.call = null;
      call.error(err as Error);
      this.release();
      return;
    }
    this.phase = 'head';
    this.sentAt = Date.now();
    this.awaitingFirstByte = false;
    const s = this.socket;
    s.setTimeout(call.req.headersTimeout);
    if (bytes.length === 1) {
      s.write(bytes[0]);
    } else {
      s.cork();
      for (const b of bytes) s.write(b);
      s.uncork();
    }
    if (call.req.bodyStream) {
      this.sending = true;
      this.pump(call, call.req.bodyStream).then(
        () => {
          this.sending = false;
          // The answer came before the body was all sent: the connection is mid-request.
          if (call.over && this.call !== call) this.destroy();
        },
        (err: Error) => {
          this.sending = false;
          if (this.call === call) this.fail(new UpstreamHttpError('UPSTREAM_CLOSED', `the request body could not be read: ${err.message}`));
          else this.destroy();
        });
    }
  }

  /** True while a streamed body is still being written: the connection cannot be kept before it ends. */
  private sending = false;

  /** Writes a streamed body in chunked framing, waiting for the socket to drain between pieces. */
  private async pump(call: UpstreamCall, source: AsyncIterable<Buffer>): Promise<void> {
    const s = this.socket;
    for await (const piece of source) {
      if (this.closed || call.over) return;
      if (piece.length === 0) continue;
      s.cork();
      s.write(`${piece.length.toString(16)}\r\n`);
      s.write(piece);
      const more = s.write('\r\n');
      s.uncork();
      if (!more) await drained(s);
    }
    if (!this.closed && !call.over) {
      s.write('0\r\n\r\n');
      // The whole request is out: from now on the upstream's silence, and its first-byte deadline, are its own.
      this.sentAt = Date.now();
      if (this.phase === 'head') s.setTimeout(call.req.headersTimeout);
    }
  }

  private onData(buf: Buffer): void {
    const call = this.call;
    if (!call) {
      // Bytes nobody asked for: the connection cannot be trusted with another request.
      this.destroy();
      return;
    }
    try {
      call.parser.execute(buf);
      call.flush();
    } catch (err) {
      // What arrived before the fault is the client's, as it would have been a read earlier.
      if (err instanceof ResponseParseError) call.flush();
      return this.fail(err instanceof ResponseParseError ? new UpstreamHttpError('UPSTREAM_PROTOCOL', err.message) : (err as Error));
    }
    if (this.call === null && !this.closed) {
      if (call.parser.keepAlive && !this.sending) this.keep(call.parser.keepAliveHintMs);
      else this.destroy();
    }
  }

  /** A response is complete and the connection may serve another one. */
  private keep(hintMs: number): void {
    // An upstream's own idle limit, less a second, so it never closes under a request of ours.
    if (hintMs > 0) this.keepAliveMs = Math.min(this.keepAliveMs, hintMs - 1000);
    if (this.keepAliveMs <= 0) return this.destroy();
    this.served++;
    if (this.socket.isPaused()) this.socket.resume();
    this.release();
  }

  private release(): void {
    this.phase = 'idle';
    this.socket.setTimeout(this.keepAliveMs);
    this.socket.unref();
    this.owner.released(this);
  }

  private onEnd(): void {
    const call = this.call;
    if (call) {
      try {
        call.parser.end();
      } catch (err) {
        return this.fail(new UpstreamHttpError('UPSTREAM_SOCKET', (err as Error).message));
      }
    }
    this.destroy();
  }

  private onTimeout(): void {
    if (this.phase === 'idle') return this.destroy();
    const call = this.call;
    const seconds = (ms: number) => (ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`);
    if (this.phase === 'connect') {
      return this.fail(new UpstreamHttpError('UPSTREAM_CONNECT_TIMEOUT', `no connection to the upstream within ${seconds(this.owner.options.connectTimeoutMs)}`));
    }
    if (this.phase === 'head') {
      return this.fail(new UpstreamHttpError('UPSTREAM_HEADERS_TIMEOUT', `no response head from the upstream within ${seconds(call?.req.headersTimeout ?? 0)}`));
    }
    if (this.awaitingFirstByte) {
      return this.fail(new UpstreamHttpError('UPSTREAM_FIRST_BYTE_TIMEOUT', `no response body from the upstream within ${seconds(call?.req.firstByteTimeout ?? 0)}`));
    }
    this.fail(new UpstreamHttpError('UPSTREAM_BODY_TIMEOUT', `the upstream sent nothing for ${seconds(call?.req.bodyTimeout ?? 0)}`));
  }

  private onClose(): void {
    this.closed = true;
    if (this.call) this.fail(new UpstreamHttpError('UPSTREAM_SOCKET', 'the connection to the upstream closed'));
    this.owner.removed(this);
  }

  destroy(): void {
    if (this.closed) return;
    this.closed = true;
    this.socket.destroy();
  }

  get open(): boolean {
    return !this.closed;
  }
}
