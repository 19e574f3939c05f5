import WebSocket from 'ws';
import { closeReason } from '../../core/http/websocket';

/** An upstream WebSocket refused or failed before it opened: `status` is the HTTP answer to the upgrade, when one came. */
export class UpstreamWsError extends Error {
  constructor(message: string, readonly status?: number, readonly headers?: Record<string, string | string[] | undefined>, readonly timeout = false) {
    super(message);
  }
}

/** An open upstream WebSocket, as realtime sessions use it. */
export interface UpstreamSocket {
  send(data: Buffer, binary: boolean): void;
  /** Bytes queued for the upstream. */
  readonly bufferedAmount: number;
  /** Stops reading from the upstream (backpressure towards it); `resume` reads again. */
  pause(): void;
  resume(): void;
  close(code: number, reason: string): void;
  onMessage(listener: (data: Buffer, binary: boolean) => void): void;
  onClose(listener: (code: number, reason: string) => void): void;
}

/** Codes a peer may send in a close frame (RFC 6455 §7.4): others are replaced by 1011 when passed on. */
export const sendableCloseCode = (code: number) => (code >= 1000 && code <= 1014 && code !== 1004 && code !== 1005 && code !== 1006) || (code >= 3000 && code <= 4999);

/**
 * Opens a WebSocket to the upstream with the `ws` client (no compression: realtime audio does
 * not compress, and inflating costs memory per socket). Resolves once it is open; rejects
 * with the HTTP status of a refused upgrade, a connection error or the handshake timeout, so
 * the caller can try another key before it answers its own client.
 */
export function connectUpstream(url: string, headers: Record<string, string>, timeoutMs: number, maxMessage: number): Promise<UpstreamSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers, perMessageDeflate: false, handshakeTimeout: timeoutMs, maxPayload: maxMessage, followRedirects: false });
    let settled = false;
    ws.once('unexpected-response', (_req, res) => {
      settled = true;
      reject(new UpstreamWsError(`upstream refused the WebSocket upgrade with ${res.statusCode}`, res.statusCode, res.headers));
      res.resume();
      ws.terminate();
    });
    ws.once('error', (err) => {
      if (settled) return;
      settled = true;
      reject(new UpstreamWsError(err.message, undefined, undefined, /timed out/i.test(err.message)));
    });
    ws.once('open', () => {
      settled = true;
      // Errors after the open end the socket: its close event tells the session.
      ws.on('error', () => {});
      resolve({
        send: (data, binary) => ws.send(data, { binary }),
        get bufferedAmount() { return ws.bufferedAmount; },
        pause: () => ws.pause(),
        resume: () => ws.resume(),
        close: (code, reason) => {
          if (ws.readyState === WebSocket.OPEN) ws.close(sendableCloseCode(code) ? code : 1000, closeReason(reason));
          else ws.terminate();
        },
        onMessage: (l) => ws.on('message', (data, binary) => l(data as Buffer, binary)),
        onClose: (l) => ws.on('close', (code, reason) => l(code, reason.toString('utf8'))),
      });
    });
  });
}
