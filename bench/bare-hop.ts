/**
 * The floor under Switchyard's hop: the same runtime and the same two edges (uWebSockets.js in
 * front, the gateway's own upstream HTTP client behind), with nothing between them: no
 * authentication, limits, routing, billing, usage parsing or timers. `bench:proxy` measures
 * it beside nginx so the gap splits into what the runtime's hop costs and what the gateway's
 * work on top of it costs. Prints `listening <url>`; argv: the upstream origin.
 * UPSTREAM_CONNECTIONS: most upstream connections at once (256 by default, as the gateway's).
 */
import { uWS, type HttpResponse } from '../server/core/http/uws';
import { UpstreamClient } from '../server/adapters/upstream-http/client';
import type { ResponseController, ResponseHandler, ResponseHeaders } from '../server/adapters/upstream-http/types';

const origin = process.argv[2];
if (!origin) throw new Error('usage: bare-hop.ts <upstream origin>');
const client = new UpstreamClient({ connections: Number(process.env.UPSTREAM_CONNECTIONS ?? 256), connectTimeoutMs: 5_000, keepAliveMs: 60_000 });

class Relay implements ResponseHandler {
  aborted = false;
  constructor(private readonly res: HttpResponse) {}
  onRequestStart(): void {}
  onResponseStart(_c: ResponseController, status: number, headers: ResponseHeaders): void {
    if (this.aborted) return;
    const type = headers['content-type'];
    this.res.cork(() => {
      this.res.writeStatus(String(status));
      if (typeof type === 'string') this.res.writeHeader('content-type', type);
    });
  }
  onResponseData(_c: ResponseController, chunk: Buffer): void {
    if (!this.aborted) this.res.cork(() => this.res.write(chunk));
  }
  onResponseEnd(): void {
    if (!this.aborted) this.res.cork(() => this.res.end());
  }
  onResponseError(): void {
    if (!this.aborted) this.res.cork(() => this.res.writeStatus('502').end());
  }
}

const app = uWS.App().any('/*', (res, req) => {
  const path = req.getUrl();
  const headers = { authorization: req.getHeader('authorization') };
  const contentType = req.getHeader('content-type');
  const relay = new Relay(res);
  res.onAborted(() => { relay.aborted = true; });
  const parts: Buffer[] = [];
  res.onData((piece, last) => {
    parts.push(Buffer.from(piece.slice(0)));
    if (!last) return;
    client.dispatch({ origin, path, method: 'POST', headers, contentType, body: Buffer.concat(parts), headersTimeout: 0, bodyTimeout: 0 }, relay);
  });
});
app.listen('127.0.0.1', 0, (socket) => {
  if (!socket) throw new Error('bare hop: listen failed');
  console.log(`listening http://127.0.0.1:${uWS.us_socket_local_port(socket)}`);
});
