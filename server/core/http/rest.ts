import { createOpenApiNodeHttpHandler } from 'trpc-to-openapi';
import type { AnyRouter } from '@trpc/server';
import type { RequestContext } from '../../../contract/trpc';
import { defaultCode } from '../../../contract/errors';
import { errorEnvelope, type Exchange } from './exchange';
import { readJsonObject, refuse } from './body-intake';
import type { Logger } from '../log';
import { errorFields } from '../log';
import { lockBodyCoercion } from './coercion';
import { readTarget, type Target } from './request-target';
import { SharedAnswers, type Answer, type Sharing } from './shared-answers';

interface ZodIssueLike { path?: (string | number)[]; message: string; code?: string; keys?: string[] }
type Ctx = RequestContext & { failure?: unknown };

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

/**
 * How a failure of the layers below (the database's) is answered, when it is one they know:
 * the composition root supplies the rule, so the transport names no storage.
 */
export interface HttpFailure { status: number; code: string; message: string; headers?: Record<string, string> }
export type FailureAnswer = (err: unknown) => HttpFailure | undefined;

/**
 * Serves the contract's REST paths through trpc-to-openapi on uWS. The library gets a cheap
 * Request look-alike with the body already parsed, and a response stub that hands back the
 * whole answer, so it never builds Node streams; its error bodies are rewritten into our
 * envelope. The answer is sent as is, or kept for the same caller's next identical GET
 * (`sharing`: shared-answers.ts).
 */
export function createRestHandler(router: AnyRouter, makeContext: (ex: Exchange) => RequestContext, log: Logger, failureOf: FailureAnswer, sharing?: Sharing) {
  lockBodyCoercion(router);
  const handler = createOpenApiNodeHttpHandler({
    router,
    createContext: ({ req }: any) => req.switchyardContext,
    responseMeta: ({ ctx, errors }: any) => ({
      status: errors.length ? undefined : ctx?.response.status,
      headers: ctx ? Object.fromEntries(ctx.resHeaders) : {},
    }),
    onError: ({ error, ctx }: any) => {
      if (ctx) ctx.failure = error;
      if (error.code === 'INTERNAL_SERVER_ERROR') log.error('request_failed', errorFields(error.cause ?? error));
    },
  } as any) as unknown as (req: unknown, res: unknown) => Promise<void>;

  const answer = (ex: Exchange, target: Extract<Target, { ok: true }>, parsed: unknown): Promise<Answer> => {
    const ctx: Ctx = { ...makeContext(ex), transport: 'rest' };
    const ac = new AbortController();
    ex.onAbort(() => ac.abort());
    const headers = new Headers();
    for (const k in ex.headers) headers.set(k, ex.headers[k]);
    // The intake accepted the body as JSON (or there is none); the library wants the type exactly.
    if (BODY_METHODS.has(ex.method)) headers.set('content-type', 'application/json');
    // The library's own query parser runs on raw text into a plain object (`?constructor=1`
    // breaks it): it is always handed ours. DELETE input comes from the query only there, and
    // the API documents `DELETE /x-config {"keys":[...]}`, so a JSON object body joins it.
    const query = ex.method === 'DELETE' && parsed !== undefined ? Object.assign(Object.create(null), target.query, parsed) : target.query;
    const props: PropertyDescriptorMap = {
      // HEAD is answered as GET, without the body (Exchange.send).
      method: { value: ex.method === 'HEAD' ? 'GET' : ex.method },
      url: { value: ex.url },
      headers: { value: headers },
      signal: { value: ac.signal },
      body: { value: parsed },
      query: { value: query },
      switchyardContext: { value: ctx },
    };
    const req = Object.create(Request.prototype, props);
    return new Promise<Answer>((resolve) => {
      const res = {
        statusCode: 200,
        headers: {} as Record<string, string>,
        setHeader(k: string, v: string | number) { this.headers[k.toLowerCase()] = String(v); },
        getHeader(k: string) { return this.headers[k.toLowerCase()]; },
        end(body?: string) {
          if (this.statusCode < 400) return resolve({ status: this.statusCode, headers: this.headers, body: body ?? '' });
          const env = toEnvelope(this.statusCode, body, ctx.failure, failureOf);
          resolve({
            status: env.status,
            headers: { ...withoutContentType(this.headers), ...env.headers, 'content-type': 'application/json' },
            body: JSON.stringify(env.body),
          });
        },
      };
      handler(req, res).catch((err) => {
        log.error('rest_handler_crashed', errorFields(err));
        resolve({ status: 500, headers: { 'content-type': 'application/json' }, body: JSON.stringify(errorEnvelope(500, 'Internal server error')) });
      });
    });
  };

  const shared = sharing ? new SharedAnswers(router, sharing, makeContext) : undefined;

  return async function serveRest(ex: Exchange): Promise<void> {
    const target = readTarget(ex.path, ex.query);
    if (!target.ok) return refuse(ex, target);
    const body = await readJsonObject(ex, { required: false, storableText: true });
    if (!body.ok) return refuse(ex, body);
    const a = (shared && await shared.answer(ex, () => answer(ex, target, body.value))) || await answer(ex, target, body.value);
    ex.send(a.status, a.headers, a.body);
  };
}

function withoutContentType(h: Record<string, string>): Record<string, string> {
  const { 'content-type': _, ...rest } = h;
  return rest;
}

function toEnvelope(status: number, body: string | undefined, failure: unknown, failureOf: FailureAnswer): { status: number; body: unknown; headers?: Record<string, string> } {
  let shape: { message?: string; issues?: ZodIssueLike[]; data?: { apiCode?: string } } = {};
  try { shape = body ? JSON.parse(body) : {}; } catch { /* keep defaults */ }
  const known = status >= 500 ? failureOf(failure) : undefined;
  if (known) return { status: known.status, body: errorEnvelope(known.status, known.message, known.code), headers: known.headers };
  if (status >= 500) return { status, body: errorEnvelope(status, 'Internal server error') };
  if (shape.issues?.length) return { status: 400, body: errorEnvelope(400, describeIssues(shape.issues), 'invalid_request') };
  if (status === 404 && shape.message === 'Not found') return { status, body: errorEnvelope(404, 'No such endpoint or method', 'unknown_endpoint') };
  return { status, body: errorEnvelope(status, shape.message ?? 'Request failed', shape.data?.apiCode ?? defaultCode(status)) };
}

/** Names the offending field(s): `SecretKey: must be at least 20 characters`. */
export function describeIssues(issues: ZodIssueLike[]): string {
  return issues.slice(0, 5).map((i) => {
    if (i.code === 'unrecognized_keys' && i.keys?.length) {
      const where = i.path?.length ? ` in ${i.path.join('.')}` : '';
      return `unknown field${i.keys.length > 1 ? 's' : ''}${where}: ${i.keys.join(', ')}`;
    }
    const field = i.path?.length ? i.path.join('.') : 'body';
    return `${field}: ${i.message}`;
  }).join('; ');
}
