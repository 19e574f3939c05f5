import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';

/**
 * Test-only: a TCP relay in front of a database that a test can cut and restore, so the real
 * driver sees a real outage (connections reset, new ones refused). It keeps its port across a
 * restore, so a URL pointing at it stays valid.
 */
export class TcpRelay {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  /** A relay in front of the PostgreSQL of `url`, already up; `url` rewritten to go through it. */
  static async before(url: string): Promise<{ relay: TcpRelay; url: string }> {
    const direct = new URL(url);
    const relay = new TcpRelay({ host: direct.hostname, port: Number(direct.port || 5432) });
    await relay.up();
    const via = new URL(url);
    via.host = `127.0.0.1:${relay.port}`;
    return { relay, url: via.toString() };
  }

  async up(): Promise<void> {
    if (this.server) return;
    const server = createServer((client) => {
      const db = connect(this.target.port, this.target.host);
      for (const s of [client, db]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => undefined);
      }
      client.pipe(db).pipe(client);
      client.on('close', () => db.destroy());
      db.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', resolve);
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  async down(): Promise<void> {
    const server = this.server;
    this.server = null;
    for (const s of this.sockets) s.destroy();
    if (server) await new Promise((r) => server.close(r));
  }
}
