import uWS from 'uWebSockets.js';

export { uWS };
export type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket } from 'uWebSockets.js';

/**
 * The uWebSockets.js loader silently falls back to a slow JavaScript server when its native
 * binary does not load. That fallback exports no `getParts`, so its absence gives it away.
 */
export const isNativeUws = typeof (uWS as unknown as { getParts?: unknown }).getParts === 'function';

const LIBUS_LISTEN_EXCLUSIVE_PORT = 1;

/**
 * uWS listens with SO_REUSEPORT by default: a stale process on the same port would silently
 * take half the traffic. Exclusive listening makes that an error instead.
 */
export function listenExclusive(app: uWS.TemplatedApp, host: string, port: number): Promise<{ socket: uWS.us_listen_socket; port: number }> {
  return new Promise((resolve, reject) => {
    (app as any).listen(host, port, LIBUS_LISTEN_EXCLUSIVE_PORT, (socket: uWS.us_listen_socket | false) => {
      if (!socket) reject(new Error(`cannot listen on ${host}:${port} (address in use or not available)`));
      else resolve({ socket, port: uWS.us_socket_local_port(socket as any) });
    });
  });
}
