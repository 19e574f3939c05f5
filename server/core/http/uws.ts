import { createRequire } from 'node:module';
import type * as Uws from 'uWebSockets.js';
import { chooseUwsBinary, currentRuntime } from './uws-loader';

export type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket } from 'uWebSockets.js';

type UwsModule = typeof Uws;

/**
 * The native binary is picked here rather than by the package's own loader, which throws a
 * dlopen stack (or, in other distributions, slides silently onto a slow JavaScript server)
 * when the binary does not fit the runtime. What went wrong is kept as one line for start-up
 * to report; the JavaScript fallback stands in so that ALLOW_UWS_FALLBACK=1 can still serve.
 */
function load(): { native?: UwsModule; problem?: string } {
  if (['1', 'true'].includes((process.env.UWS_USE_FALLBACK ?? '').toLowerCase())) {
    return { problem: 'uWebSockets.js native binary not loaded: UWS_USE_FALLBACK asks for the slow JavaScript fallback — unset it' };
  }
  const choice = chooseUwsBinary(currentRuntime());
  if (!choice.ok) return { problem: choice.reason };
  try {
    return { native: createRequire(import.meta.url)(`uWebSockets.js/${choice.file}`) as UwsModule };
  } catch (err) {
    const cause = (err instanceof Error ? err.message : String(err)).split('\n')[0];
    return { problem: `uWebSockets.js native binary ${choice.file} did not load: ${cause}` };
  }
}

/** The JavaScript stand-in (a partial uWS API on node:http), loaded only when the native one is not. */
function fallback(): UwsModule {
  return createRequire(import.meta.url)('@trufflesuite/uws-js-unofficial/dist/index.js') as UwsModule;
}

/**
 * uWS reads its head limit once, as the binary loads: a head that outgrows it is answered 431
 * (the Node 20 binary applies it only to a head that arrives in pieces). Its default of 4 KiB
 * would refuse ordinary requests whose head a slow link splits; 16 KiB is Node's own default.
 * The operator's value, when set, wins.
 */
process.env.UWS_HTTP_MAX_HEADERS_SIZE ??= String(16 * 1024);

const loaded = load();

/** Why the native core is not in use, as one line for the operator; undefined when it is. */
export const nativeUwsProblem: string | undefined = loaded.problem;
export const isNativeUws = loaded.native !== undefined;
export const uWS: UwsModule = loaded.native ?? fallback();
// Lets callers name the types as uWS.TemplatedApp, as they could with the package import.
export declare namespace uWS {
  export type TemplatedApp = Uws.TemplatedApp;
  export type us_listen_socket = Uws.us_listen_socket;
  export type HttpRequest = Uws.HttpRequest;
  export type HttpResponse = Uws.HttpResponse;
}

const LIBUS_LISTEN_EXCLUSIVE_PORT = 1;

/**
 * uWS listens with SO_REUSEPORT by default: a stale process on the same port would silently
 * take half the traffic. Exclusive listening makes that an error instead.
 */
export function listenExclusive(app: Uws.TemplatedApp, host: string, port: number): Promise<{ socket: Uws.us_listen_socket; port: number }> {
  return new Promise((resolve, reject) => {
    (app as any).listen(host, port, LIBUS_LISTEN_EXCLUSIVE_PORT, (socket: Uws.us_listen_socket | false) => {
      if (!socket) reject(new Error(`cannot listen on ${host}:${port} (address in use or not available)`));
      else resolve({ socket, port: uWS.us_socket_local_port(socket as any) });
    });
  });
}
