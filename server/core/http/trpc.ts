import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import type { AnyRouter } from '@trpc/server';
import type { RequestContext } from '../../../contract/trpc';
import type { Exchange } from './exchange';
import { readJsonObject, refuse } from './body-intake';
import type { Logger } from '../log';
import { errorFields } from '../log';

/** The plain tRPC endpoint the console uses (`/trpc/<procedure>`), with the contract's types. */
export function createTrpcHandler(router: AnyRouter, makeContext: (ex: Exchange) => RequestContext, log: Logger) {
  return async function serveTrpc(ex: Exchange): Promise<void> {
    const body = await readJsonObject(ex, { required: false, storableText: true });
    if (!body.ok) return refuse(ex, body);
    const ac = new AbortController();
    ex.onAbort(() => ac.abort());
    const req = new Request(`http://localhost${ex.url}`, {
      method: ex.method,
      headers: ex.headers,
      body: ex.method === 'GET' || ex.method === 'HEAD' ? undefined : (body.raw as Uint8Array<ArrayBuffer>),
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
