import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import type { AnyRouter } from '@trpc/server';
import type { RequestContext } from '../../../contract/trpc';
import type { Exchange } from './exchange';
import { readJsonObject, refuse } from './body-intake';
import { readTarget } from './request-target';
import { unstorableField } from './storable-text';
import type { Logger } from '../log';
import { errorFields } from '../log';
import { ApiError, type ApiStatus } from '../../../contract/errors';
import type { FailureAnswer } from './rest';

/**
 * The plain tRPC endpoint the console uses (`/trpc/<procedure>`), with the contract's types.
 * A failure of the layers below that `failureOf` knows (a duplicate, an unreachable database)
 * gets its answer here as on the REST paths, instead of tRPC's 500.
 */
export function createTrpcHandler(router: AnyRouter, makeContext: (ex: Exchange) => RequestContext, log: Logger, failureOf: FailureAnswer) {
  return async function serveTrpc(ex: Exchange): Promise<void> {
    const target = readTarget(ex.path, ex.query);
    if (!target.ok) return refuse(ex, target);
    const body = await readJsonObject(ex, { required: false });
    if (!body.ok) return refuse(ex, body);
    // A query's input is JSON inside the query string; a batch is an object of inputs by index.
    const batch = target.query.batch?.[0] === '1';
    const problem = inputProblem(body.value, batch) ?? inputProblem(jsonOf(target.query.input?.[0]), batch);
    if (problem) return ex.sendError(400, problem, 'invalid_request');
    // HEAD is answered as GET, without the body (Exchange.send).
    const method = ex.method === 'HEAD' ? 'GET' : ex.method;
    const ac = new AbortController();
    ex.onAbort(() => ac.abort());
    const req = new Request(`http://localhost${ex.url}`, {
      method,
      headers: ex.headers,
      body: method === 'GET' ? undefined : (body.raw as Uint8Array<ArrayBuffer>),
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
      onError: ({ error, ctx }) => {
        if (error.code !== 'INTERNAL_SERVER_ERROR') return;
        // tRPC shapes the answer from this same error object after onError returns.
        const known = failureOf(error.cause ?? error);
        if (!known) {
          log.error('trpc_failed', errorFields(error.cause ?? error));
          // The failure's own text (a query, a driver's message) stays in the log, as on REST.
          error.message = 'Internal server error';
          return;
        }
        // The status and code the contract's ApiError gives that failure.
        const as = new ApiError(known.status as ApiStatus, known.message, known.code);
        Object.assign(error, { code: as.code, message: as.message });
        for (const [k, v] of Object.entries(known.headers ?? {})) (ctx as RequestContext | undefined)?.resHeaders.set(k, v);
      },
    });
    const headers: Record<string, string> = {};
    response.headers.forEach((v, k) => {
      if (k !== 'content-length' && k !== 'date' && k !== 'transfer-encoding') headers[k] = v;
    });
    ex.send(response.status, headers, new Uint8Array(await response.arrayBuffer()));
  };
}

/** The first field of a procedure input (each, in a batch) the database could not store, named as in the input. */
function inputProblem(input: unknown, batch: boolean): string | undefined {
  if (input === undefined) return undefined;
  if (!batch || typeof input !== 'object' || input === null) return unstorableField(input);
  for (const one of Object.values(input)) {
    const problem = unstorableField(one);
    if (problem) return problem;
  }
  return undefined;
}

/** Parsed JSON, or undefined when absent or malformed (tRPC answers a malformed input itself). */
function jsonOf(text: string | undefined): unknown {
  if (text === undefined || !text.includes('\\u')) return undefined;
  try { return JSON.parse(text); } catch { return undefined; }
}
