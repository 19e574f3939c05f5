import type { TemplatedApp, WebSocket } from 'uWebSockets.js';
import { statusLine } from './exchange';

/**
 * WebSocket routes on uWS's own WebSocket support, behind plain interfaces: the gateway's
 * realtime sessions see an upgrade to accept or refuse, and then a socket with its events,
 * never uWS itself.
 */

/** One WebSocket upgrade request, before it is accepted. */
export interface SocketUpgrade {
  /** The request headers (lower-case names). */
  readonly headers: Readonly<Record<string, string>>;
  /** The query string without `?`. */
  readonly query: string;
  /** The TCP peer's address. */
  readonly ip: string;
  /** The client went away before the upgrade was answered. */
  readonly aborted: boolean;
  onAbort(listener: () => void): void;
  /** Completes the upgrade, answering `protocol` (or none) as the chosen subprotocol; `peer` hears the socket from then on. */
  accept(protocol: string | undefined, peer: SocketPeer): void;
  /** Answers the upgrade with an HTTP error instead. */
  refuse(status: number, headers: Record<string, string>, body: string): void;
}

/** What a session hears from its client socket. */
export interface SocketPeer {
  open(socket: ClientSocket): void;
  /** A message, copied off uWS's buffer. */
  message(data: Buffer, binary: boolean): void;
  /** The socket's send buffer drained. */
  drain(): void;
  closed(code: number, reason: string): void;
}

export interface ClientSocket {
  /** Sends a message; false when it was queued behind backpressure (or the socket is gone). */
  send(data: Uint8Array | string, binary: boolean): boolean;
  /** Bytes waiting to be sent. */
  readonly bufferedAmount: number;
  /** A close frame with `code` and `reason` (at most 123 bytes), then the connection ends. */
  close(code: number, reason: string): void;
}

interface UserData {
  peer: SocketPeer | null;
  socket: UwsClientSocket | null;
}

/** Largest message a client may send: a realtime audio append of a few seconds is well below. */
const MAX_MESSAGE = 16 * 1024 * 1024;
/** Beyond this much queued for a client uWS drops sends; sessions pause their upstream far earlier. */
const MAX_BACKPRESSURE = 32 * 1024 * 1024;

class UwsClientSocket implements ClientSocket {
  closed = false;
  constructor(private readonly ws: WebSocket<UserData>) {}

  send(data: Uint8Array | string, binary: boolean): boolean {
    if (this.closed) return false;
    return this.ws.send(data, binary) === 1;
  }

  get bufferedAmount(): number {
    return this.closed ? 0 : this.ws.getBufferedAmount();
  }

  close(code: number, reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.ws.end(code, closeReason(reason));
  }
}

/** A close frame's reason: at most 123 bytes (RFC 6455 §5.5), cut between characters. */
export function closeReason(reason: string): string {
  let r = reason;
  while (Buffer.byteLength(r) > 123) r = r.slice(0, -1);
  return r;
}

const decoder = new TextDecoder();

/** Registers `paths` as WebSocket routes; `serve` decides each upgrade. */
export function registerWebSocket(app: TemplatedApp, paths: readonly string[], headerNames: readonly string[], serve: (u: SocketUpgrade) => void): void {
  const keep = new Set(headerNames);
  for (const path of paths) {
    app.ws<UserData>(path, {
      maxPayloadLength: MAX_MESSAGE,
      maxBackpressure: MAX_BACKPRESSURE,
      closeOnBackpressureLimit: 0,
      // uWS pings an idle connection and closes one that never answers; sessions keep their own idle time.
      idleTimeout: 120,
      sendPingsAutomatically: true,
      upgrade: (res, req, context) => {
        const headers: Record<string, string> = {};
        req.forEach((k, v) => {
          if (keep.has(k)) headers[k] = headers[k] === undefined ? v : `${headers[k]}, ${v}`;
        });
        const key = req.getHeader('sec-websocket-key');
        const extensions = req.getHeader('sec-websocket-extensions');
        const query = req.getQuery() ?? '';
        let aborted = false;
        let answered = false;
        const listeners: (() => void)[] = [];
        res.onAborted(() => {
          aborted = true;
          for (const l of listeners) l();
        });
        let ip: string | undefined;
        serve({
          headers,
          query,
          get ip() {
            if (ip === undefined) {
              const t = aborted ? '' : decoder.decode(res.getRemoteAddressAsText());
              ip = t.startsWith('::ffff:') ? t.slice(7) : t;
            }
            return ip;
          },
          get aborted() { return aborted; },
          onAbort(l) { if (aborted) l(); else listeners.push(l); },
          accept(protocol, peer) {
            if (aborted || answered) return;
            answered = true;
            res.cork(() => res.upgrade<UserData>({ peer, socket: null }, key, protocol ?? '', extensions, context));
          },
          refuse(status, h, body) {
            if (aborted || answered) return;
            answered = true;
            res.cork(() => {
              res.writeStatus(statusLine(status));
              for (const k in h) res.writeHeader(k, h[k]);
              res.end(body, true);
            });
          },
        });
      },
      open: (ws) => {
        const d = ws.getUserData();
        d.socket = new UwsClientSocket(ws);
        d.peer?.open(d.socket);
      },
      message: (ws, message, isBinary) => {
        // Copied: uWS reuses the buffer once this returns.
        ws.getUserData().peer?.message(Buffer.from(new Uint8Array(message)), isBinary);
      },
      drain: (ws) => ws.getUserData().peer?.drain(),
      close: (ws, code, message) => {
        const d = ws.getUserData();
        if (d.socket) d.socket.closed = true;
        d.peer?.closed(code, Buffer.from(message).toString('utf8'));
        d.peer = null;
      },
    });
  }
}
