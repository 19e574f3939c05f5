import type { ResponseHeaders } from '../../adapters/upstream-http/types';
import { statusLine, type Exchange } from '../../core/http/exchange';

export type UpstreamHeaders = ResponseHeaders;

/**
 * Upstream response headers that must not reach the client: hop-by-hop ones, those uWS
 * writes itself (date, content-length), and those that describe the Owner's provider
 * account rather than the client's (organization, the provider's own rate limits, cookies).
 */
const DROP = new Set([
  'connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'proxy-connection', 'te', 'trailer',
  'transfer-encoding', 'upgrade', 'date', 'content-length', 'content-encoding', 'server', 'set-cookie', 'alt-svc',
  'openai-organization', 'openai-project', 'anthropic-organization-id', 'x-envoy-upstream-service-time',
]);

const dropped = (name: string) => DROP.has(name) || name.startsWith('x-ratelimit-') || name.startsWith('anthropic-ratelimit-');

function writeHeaders(ex: Exchange, status: number, headers: UpstreamHeaders): void {
  const res = ex.res;
  res.writeStatus(statusLine(status));
  for (const name in headers) {
    if (dropped(name)) continue;
    const v = headers[name];
    if (typeof v === 'string') res.writeHeader(name, v);
    else for (const one of v) res.writeHeader(name, one);
  }
}

/** Sends a whole upstream answer (status, filtered headers, body) in one corked batch. */
export function sendWhole(ex: Exchange, status: number, headers: UpstreamHeaders, body: Buffer): void {
  if (ex.aborted || ex.finished) return;
  ex.finished = true;
  ex.res.cork(() => {
    writeHeaders(ex, status, headers);
    ex.res.end(body);
  });
}

/**
 * A streamed answer on its way to the client: headers go out with the first bytes, every
 * write honours backpressure (it resolves once uWS drained its buffer), and nothing touches
 * the response once the client went away.
 */
export class ClientStream {
  started = false;
  private waiting: (() => void) | null = null;

  constructor(private readonly ex: Exchange, private readonly status: number, private readonly headers: UpstreamHeaders) {
    ex.onAbort(() => this.release());
  }

  private release(): void {
    const w = this.waiting;
    this.waiting = null;
    w?.();
  }

  /** Writes bytes (status and headers first, on the first call); resolves when it may write again. */
  write(bytes: Buffer): Promise<void> | undefined {
    const ex = this.ex;
    if (ex.aborted || ex.finished) return undefined;
    let ok = true;
    ex.res.cork(() => {
      if (!this.started) {
        this.started = true;
        writeHeaders(ex, this.status, this.headers);
      }
      ok = ex.res.write(bytes);
    });
    if (ok) return undefined;
    return new Promise<void>((resolve) => {
      this.waiting = resolve;
      ex.res.onWritable(() => {
        this.release();
        return true;
      });
    });
  }

  /** A clean end: the terminating chunk. */
  end(rest: Buffer | null): void {
    const ex = this.ex;
    if (ex.aborted || ex.finished) return;
    ex.finished = true;
    ex.res.cork(() => {
      if (!this.started) {
        this.started = true;
        writeHeaders(ex, this.status, this.headers);
      }
      ex.res.end(rest ?? undefined);
    });
  }

  /**
   * An unclean end: the error event reaches the client, then the connection is closed
   * without the terminating chunk, so SDKs and plain HTTP clients alike see a failure.
   */
  async fail(errorEvent: Buffer): Promise<void> {
    await this.write(errorEvent);
    const ex = this.ex;
    if (ex.aborted || ex.finished) return;
    ex.finished = true;
    ex.res.close();
  }
}
