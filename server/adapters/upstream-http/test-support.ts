// Shared fixtures for the UpstreamClient tests: loopback upstreams, clients, and their cleanup.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo, type Socket } from 'node:net';
import { UpstreamClient, type UpstreamClientOptions } from './client';
import { requestWhole } from './whole';
import { type UpstreamHttpError, type UpstreamRequest } from './types';

export type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

/** A loopback upstream that counts the TCP connections it accepted. */
export class Upstream {
  connections = 0;
  readonly sockets = new Set<Socket>();
  constructor(readonly server: Server, private handler: Handler) {
    server.on('connection', (s: Socket) => {
      this.connections++;
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    server.on('request', (req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => this.handler(req, res, body));
    });
  }

  answer(h: Handler): void {
    this.handler = h;
  }
}

const servers: Server[] = [];
const clients: UpstreamClient[] = [];

export async function upstream(handler: Handler, make: () => Server = () => createServer()): Promise<Upstream & { url: string }> {
  const server = make();
  const u = new Upstream(server, handler);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return Object.assign(u, { url: `${'setSecureContext' in server ? 'https' : 'http'}://127.0.0.1:${port}` });
}

export function client(o: Partial<UpstreamClientOptions> = {}): UpstreamClient {
  const c = new UpstreamClient({ connections: 8, connectTimeoutMs: 2000, keepAliveMs: 30_000, ...o });
  clients.push(c);
  return c;
}

export const post = (origin: string, body = '{"q":1}', extra: Partial<UpstreamRequest> = {}): UpstreamRequest => ({
  origin, path: '/v1/echo', method: 'POST', headers: { authorization: 'Bearer k' }, contentType: 'application/json',
  body: Buffer.from(body), headersTimeout: 2000, bodyTimeout: 2000, ...extra,
});

export const echo: Handler = (req, res, body) => {
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ path: req.url, body, auth: req.headers.authorization, type: req.headers['content-type'], enc: req.headers['accept-encoding'] }));
};

/** The error a request ends with. */
export async function failure(c: UpstreamClient, req: UpstreamRequest): Promise<UpstreamHttpError> {
  const err = await requestWhole(c, req).then(() => null, (e: UpstreamHttpError) => e);
  if (!err) throw new Error('the request succeeded');
  return err;
}

/** Closes every client and upstream the test made; register it with `afterEach(closeUpstreams)`. */
export async function closeUpstreams(): Promise<void> {
  for (const c of clients.splice(0)) await c.close();
  for (const s of servers.splice(0)) {
    s.closeAllConnections?.();
    await new Promise((r) => s.close(r));
  }
}
