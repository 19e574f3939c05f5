import type { ResponseHeaders } from './response-parser';

export type { ResponseHeaders };

/** One request to an upstream origin. */
export interface UpstreamRequest {
  /** `http://host:port` or `https://host` */
  origin: string;
  /** Path and query. */
  path: string;
  method: 'POST' | 'GET' | 'DELETE';
  headers: Record<string, string>;
  /** Sent as Content-Type with the body. */
  contentType?: string;
  body: Buffer | null;
  /**
   * A body sent as it is produced, with chunked framing (an upload streamed on): each piece is
   * written once the socket drained the one before. `body` is ignored with it; the response
   * may begin before the last piece (an early refusal), and the connection is then not kept.
   */
  bodyStream?: AsyncIterable<Buffer>;
  /** Longest wait, once the request is sent, for the response head; 0: none. */
  headersTimeout: number;
  /** Longest silence between two pieces of the body; 0: none. */
  bodyTimeout: number;
  /**
   * Longest wait, counted from when the request was written, for the first piece of the body
   * (a stream's first event); unset: only headersTimeout, then bodyTimeout.
   */
  firstByteTimeout?: number;
}

/** What a handler may do with its request while the response arrives. */
export interface ResponseController {
  /** Stops reading from the upstream (backpressure); the piece being parsed is still delivered. */
  pause(): void;
  resume(): void;
  /** Ends the request: its connection is closed and `onResponseError(reason)` follows. */
  abort(reason: Error): void;
}

/**
 * Receives one response. Exactly one of `onResponseEnd` and `onResponseError` is called,
 * once; nothing is called after it.
 */
export interface ResponseHandler {
  onRequestStart(controller: ResponseController): void;
  onResponseStart(controller: ResponseController, status: number, headers: ResponseHeaders): void;
  onResponseData(controller: ResponseController, chunk: Buffer): void;
  onResponseEnd(controller: ResponseController): void;
  onResponseError(controller: ResponseController, err: Error): void;
}

export type UpstreamErrorCode =
  | 'UPSTREAM_CONNECT_TIMEOUT'
  | 'UPSTREAM_HEADERS_TIMEOUT'
  | 'UPSTREAM_BODY_TIMEOUT'
  /** The head came but no body within the request's firstByteTimeout. */
  | 'UPSTREAM_FIRST_BYTE_TIMEOUT'
  /** The connection failed or was closed by the upstream (the system error is in the message). */
  | 'UPSTREAM_SOCKET'
  /** The upstream broke HTTP/1.1. */
  | 'UPSTREAM_PROTOCOL'
  /** The request could not be written as asked (a header with a line break, a bad origin). */
  | 'UPSTREAM_INVALID_REQUEST'
  /** The client was closed with the request still waiting or under way. */
  | 'UPSTREAM_CLOSED';

export class UpstreamHttpError extends Error {
  /**
   * The connection had served earlier responses and closed before this one began: most
   * likely the upstream closed it as idle just as the request went out, unread.
   */
  staleConnection = false;

  constructor(readonly code: UpstreamErrorCode, message: string) {
    super(message);
    this.name = 'UpstreamHttpError';
  }
}

export const TIMEOUT_CODES: ReadonlySet<string> = new Set<UpstreamErrorCode>(['UPSTREAM_CONNECT_TIMEOUT', 'UPSTREAM_HEADERS_TIMEOUT', 'UPSTREAM_BODY_TIMEOUT', 'UPSTREAM_FIRST_BYTE_TIMEOUT']);
