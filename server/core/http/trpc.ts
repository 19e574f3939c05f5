import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import type { AnyRouter } from '@trpc/server';
import type { RequestContext } from '../../../contract/trpc';
import { BodyTooLargeError, type Exchange } from './exchange';
import type { Logger } from '../log';
import { errorFields } from '../log';

/** The plain tRPC endpoint the console uses (`/trpc/<procedure>`), with the contract's types. */
export function createTrpcHandler(router: AnyRouter, makeContext: (ex: Exchange) => RequestContext, log: Logger) {
  return async function serveTrpc(ex: Exchange): Promise<void> {
    let body: Buffer;
    try {
      body = await ex.body();
    } catch (err) {
      if (err instanceof BodyTooLargeError) return ex.sendError(413, `Request body exceeds ${ex.maxBodyBytes} bytes`);
      throw err;
    }
    const ac = new AbortController();
    ex.onAbort(() => ac.abort());
    const req = new Request(`http://localhost${ex.url}`, {
      method: ex.method,
      headers: ex.headers,
      body: ex.method === 'GET' || ex.method === 'HEAD' ? undefined : new Uint8Array(body),
      signal: ac.signal,
    });
    const response = await fetchRequestHandler({
      endpoint: '/trpc',
      req,
      router,
      createContext: () => makeContext(ex),
      responseMeta: ({ ctx, errors }: any) => ({
        status: undefined,
        headers: ctx ? Object.fromEntries(ctx.resHeaders) : {},
      }),
      onError: ({ error }) => {
        if (error.code === 'INTERNAL_SERVER_ERROR') log.error('trpc_failed', errorFields(error.cause ?? error));
      },
    });
    const headers: Record<string, string> = {};
    response.headers.forEach((v, k) => {
      if (k !== 'content-length' && k !== 'date' && k !== 'transfer-encoding') headers[k] = v;
    });
    ex.send(response.status, headers, new Uint8Array(await response.arrayBuffer()));
  };
}
