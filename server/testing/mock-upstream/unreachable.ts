import net from 'node:net';

/** A TCP listener that accepts connections and never reads or answers: a black hole at the transport. */
export interface BlackHole {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** Connections accepted so far. */
  readonly accepted: number;
  close(): Promise<void>;
}

export async function startBlackHole(): Promise<BlackHole> {
  const sockets = new Set<net.Socket>();
  let accepted = 0;
  const server = net.createServer((s) => {
    accepted++;
    sockets.add(s);
    // Never read: the request stays in the socket buffer, as with a hung upstream.
    s.pause();
    s.on('error', () => {});
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get accepted() { return accepted; },
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const s of sockets) s.destroy();
    }),
  };
}

/** A loopback origin nothing listens on (connections are refused), found by binding and releasing a port. */
export async function refusedOrigin(): Promise<string> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

/** An origin whose host never resolves (`.invalid` is reserved for that, RFC 2606). */
export const UNRESOLVABLE_ORIGIN = 'https://api.switchyard-unreachable.invalid';
