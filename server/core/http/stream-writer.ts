import type { HttpResponse } from './uws';
import { Exchange, statusLine, type ResponseStamp } from './exchange';
import { readJsonObject, type JsonBody } from './body-intake';

/** Headers as an upstream sent them: a repeated header is an array of its values. */
export type HeaderValues = Readonly<Record<string, string | readonly string[]>>;
export type HeaderFilter = (name: string) => boolean;

/** Status and headers, inside a cork; `omit` names the headers not to pass on. */
function writeHead(res: HttpResponse, status: number, headers: HeaderValues, omit: HeaderFilter, stamp: ResponseStamp | null): void {
  res.writeStatus(statusLine(status));
  stamp?.stampHead(status, res);
  for (const name in headers) {
    if (omit(name)) continue;
    const v = headers[name];
    if (typeof v === 'string') res.writeHeader(name, v);
    else for (const one of v) res.writeHeader(name, one);
  }
}

/**
 * A streamed response on uWS: headers go out with the first bytes, every write honours
 * backpressure (the promise settles once uWS drained its buffer, or the client left), and
 * nothing touches the response once the client went away or it was ended.
 */
export class StreamWriter {
  started = false;
  private waiting: (() => void) | null = null;

  constructor(private readonly ex: Exchange, private readonly status: number, private readonly headers: HeaderValues, private readonly omit: HeaderFilter) {
    ex.onAbort(() => this.release());
  }

  private release(): void {
    const w = this.waiting;
    this.waiting = null;
    w?.();
  }

  write(bytes: Uint8Array): Promise<void> | undefined {
    const ex = this.ex;
    if (ex.aborted || ex.finished) return undefined;
    let ok = true;
    ex.res.cork(() => {
      if (!this.started) {
        this.started = true;
        writeHead(ex.res, this.status, this.headers, this.omit, ex.stamp);
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

  end(last: Uint8Array | null): void {
    const ex = this.ex;
    if (ex.aborted || ex.finished) return;
    ex.finished = true;
    ex.atEnd(() => ex.res.cork(() => {
      if (!this.started) {
        this.started = true;
        writeHead(ex.res, this.status, this.headers, this.omit, ex.stamp);
      }
      ex.res.end(last ?? undefined);
    }));
  }

  abort(): void {
    const ex = this.ex;
    if (ex.aborted || ex.finished) return;
    ex.finished = true;
    ex.res.close();
  }
}

/**
 * An Exchange that can also relay an upstream's answer, whole or streamed, with the upstream's
 * (possibly repeated) headers written straight from its header object, and take its body as a
 * JSON object. The proxy's routes use it: it is the gateway's ClientExchange.
 */
export class StreamingExchange extends Exchange {
  /**
   * An answer given before an upload was wholly received (a refusal, a 413) closes the
   * connection: the rest of the body is never read, and the connection could not carry
   * another request after it.
   */
  override send(status: number, headers: Record<string, string>, body: string | Uint8Array, closeConnection = false): void {
    super.send(status, headers, body, closeConnection || (this.upload !== null && !this.upload.ended));
  }

  /** The body as a JSON object, or why not (see body-intake). */
  readJsonObject(opts: { required: boolean }): Promise<JsonBody> {
    return readJsonObject(this, opts);
  }

  /** A whole response in one corked batch; a no-op once the client went away. */
  relay(status: number, headers: HeaderValues, omit: HeaderFilter, body: Uint8Array): void {
    if (this.aborted || this.finished) return;
    this.finished = true;
    this.atEnd(() => this.res.cork(() => {
      writeHead(this.res, status, headers, omit, this.stamp);
      this.res.end(body);
    }));
  }

  openStream(status: number, headers: HeaderValues, omit: HeaderFilter): StreamWriter {
    return new StreamWriter(this, status, headers, omit);
  }
}
