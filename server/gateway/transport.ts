/**
 * The port through which the proxy talks to its client: what it reads of the request and how
 * it answers, whole or streamed. The gateway never sees the HTTP server; core/http provides
 * the implementation and the composition root hands one exchange per call to `serve`.
 */

/** Response headers as an upstream sent them: a repeated header is an array of its values. */
export type HeaderValues = Readonly<Record<string, string | readonly string[]>>;

/** True for a header name that must not be passed on to the client. */
export type HeaderFilter = (name: string) => boolean;

/** The body intake's result types have one home, core/http's body intake. */
export type { BodyRefusal, JsonBody } from '../core/http/body-intake';
import type { JsonBody } from '../core/http/body-intake';

/** An upload taken as it arrives (core/http/upload.ts). */
export type { UploadBody } from '../core/http/upload';
export { noteUploadCopy, UploadError } from '../core/http/upload';
import type { UploadBody } from '../core/http/upload';

/** A WebSocket route's upgrade and socket (core/http/websocket.ts): realtime sessions talk to their client through these. */
export type { ClientSocket, SocketPeer, SocketUpgrade } from '../core/http/websocket';

/** Headers the proxy adds to every answer of a call (request ID, its own time): core/http's type. */
export type { HeadWriter, ResponseStamp } from '../core/http/exchange';
import type { ResponseStamp } from '../core/http/exchange';

/** A streamed answer: status and headers go out with the first bytes. */
export interface ResponseStream {
  /** Whether status and headers went out (the answer belongs to the client from then on). */
  readonly started: boolean;
  /** Writes bytes; a promise when the client must drain first (it also settles if the client leaves). */
  write(bytes: Uint8Array): Promise<void> | undefined;
  /** A clean end, with the last bytes if any. */
  end(last: Uint8Array | null): void;
  /** Closes the connection without a clean end: the client sees the answer fail. */
  abort(): void;
}

export interface ClientExchange {
  /** The request headers the proxy asked for (lower-case names). */
  readonly headers: Readonly<Record<string, string>>;
  /** The TCP peer's address; read only when asked for. */
  readonly ip: string;
  /** The client went away: nothing is written any more. */
  readonly aborted: boolean;
  /** The answer was ended. */
  readonly finished: boolean;
  /** Written into the head of whatever answer goes out: set once, before anything is sent. */
  stamp: ResponseStamp | null;
  onAbort(listener: () => void): void;
  /**
   * The body as a JSON object (Content-Type application/json, at most the size limit); with
   * `required` an empty body is refused too. Settles when the client leaves half-way.
   */
  readJsonObject(opts: { required: boolean }): Promise<JsonBody>;
  /** On a route that takes uploads, the body as a stream instead (null elsewhere, or when its framing was refused). */
  readonly upload?: UploadBody | null;
  /** A whole answer of the proxy's own. */
  send(status: number, headers: Record<string, string>, body: string | Uint8Array): void;
  /** A whole upstream answer, its headers passed on except those `omit` names. */
  relay(status: number, headers: HeaderValues, omit: HeaderFilter, body: Uint8Array): void;
  /** Starts a streamed upstream answer, its headers passed on except those `omit` names. */
  openStream(status: number, headers: HeaderValues, omit: HeaderFilter): ResponseStream;
  /**
   * Holds the answer's clean end (a whole answer, a stream's last bytes) until the returned
   * function is called; `finished` is set at once. Without it (an upgrade, the tests' fake) an
   * answer ends as it is given.
   */
  holdEnd?(): () => void;
}
