import { initTRPC } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';
import { z } from 'zod';
import { ApiError } from './errors';
import type { Caller, Services } from './services';

/** Who may call a procedure. `manage` and `owner` imply an authenticated account. */
export type Access = 'public' | 'account' | 'manage' | 'owner' | 'root';

export interface Meta extends OpenApiMeta {
  access?: Access;
  /** Kept beside the openapi meta so the published document can state 201 and the paging headers. */
  successStatus?: 200 | 201;
  paginated?: boolean;
}

/**
 * What every procedure sees. The server fills it per request; the contract only
 * delegates to `services`, so it depends on nothing but these interfaces.
 */
export interface RequestContext {
  resHeaders: Headers;
  /** Shared by reference: middleware copies the context, so a plain `status` field would be lost. */
  response: { status?: number };
  ip: string;
  /** The credential sent by the client (Bearer token or x-api-key), not yet checked. */
  apiKey: string | null;
  services: Services;
  /** `rest` when the call came through an OpenAPI path: its path parameters are still percent-encoded. */
  transport?: 'rest' | 'trpc';
}

const t = initTRPC
  .meta<Meta>()
  .context<RequestContext>()
  .create({
    // Stack traces never leave the server, whatever NODE_ENV says.
    isDev: false,
    errorFormatter: ({ shape, error }) => ({
      ...shape,
      data: { ...shape.data, apiCode: error instanceof ApiError ? error.apiCode : undefined },
    }),
  });

export const router = t.router;

const pathParamNames = (path: string | undefined) => [...(path ?? '').matchAll(/\{(\w+)\}/g)].map((m) => m[1]);

/**
 * REST path parameters reach the input percent-encoded (`/x-ekey/a%20b`); decode them here,
 * once, so a procedure sees the same text whichever transport carried it.
 */
const decodePathParams = t.middleware(({ ctx, meta, getRawInput, next }) => {
  const names = ctx.transport === 'rest' ? pathParamNames(meta?.openapi?.path) : [];
  if (names.length === 0) return next();
  return next({
    getRawInput: async () => {
      const raw = await getRawInput();
      if (typeof raw !== 'object' || raw === null) return raw;
      const decoded: Record<string, unknown> = { ...raw };
      for (const n of names) {
        const v = decoded[n];
        if (typeof v === 'string') {
          try { decoded[n] = decodeURIComponent(v); } catch { /* malformed escape: validate as sent */ }
        }
      }
      return decoded;
    },
  });
});

export const publicProcedure = t.procedure.use(decodePathParams);

/** Authenticates the caller and enforces the procedure's `access` before the resolver runs. */
export const authedProcedure = publicProcedure.use(async ({ ctx, meta, next }) => {
  const caller: Caller = await ctx.services.auth.authorize(ctx, meta?.access ?? 'account');
  return next({ ctx: { caller } });
});

export const paginationHeaders = z.object({
  'X-Total-Count': z.string().meta({ description: 'Number of items matching the filters' }),
  'X-Page': z.string().meta({ description: 'Page returned (1-based)' }),
  'X-Per-Page': z.string().meta({ description: 'Page size used' }),
  'X-Total-Pages': z.string().meta({ description: 'Number of pages for this page size' }),
});

export interface Page<T> {
  items: T[];
  total: number;
  page: number;
  size: number;
}

/** Paginated lists answer with a bare JSON array; the paging facts travel in headers. */
export function sendPage<T>(ctx: RequestContext, page: Page<T>): T[] {
  ctx.resHeaders.set('X-Total-Count', String(page.total));
  ctx.resHeaders.set('X-Page', String(page.page));
  ctx.resHeaders.set('X-Per-Page', String(page.size));
  ctx.resHeaders.set('X-Total-Pages', String(page.size > 0 ? Math.ceil(page.total / page.size) : 0));
  return page.items;
}

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';
export interface Route {
  method: Method;
  path: `/${string}`;
  tags: string[];
  summary: string;
  description?: string;
  access: Access;
  /** Extra error statuses beyond those implied by `access`. */
  errors?: Partial<Record<400 | 402 | 403 | 404 | 409 | 413 | 415 | 429, string>>;
  paginated?: boolean;
  successStatus?: 200 | 201;
}

const accessErrors: Record<Access, Record<number, string>> = {
  public: {},
  account: { 401: 'Missing or invalid API key' },
  manage: { 401: 'Missing or invalid API key', 403: 'Caller lacks manage permission or acts out of scope' },
  owner: { 401: 'Missing or invalid API key', 403: 'Caller is not an Owner' },
  root: { 401: 'Missing or invalid API key', 403: 'Caller is not Root' },
};

const OUT_OF_SCOPE = 'a caller that is not an Owner names an account outside its own subtree, or one that does not exist (`out_of_scope`: the same answer either way)';

/**
 * The 403 and 404 of a route that names an account (docs/decisions.md, Accounts and keys):
 * `refusals` are the route's own 403s, to which out of scope is added.
 */
export function accountTargetErrors(refusals?: string): { 403: string; 404: string } {
  return {
    403: refusals ? `${refusals}; or ${OUT_OF_SCOPE}` : `${OUT_OF_SCOPE[0].toUpperCase()}${OUT_OF_SCOPE.slice(1)}`,
    404: 'No such account, to an Owner (another tenant\'s gets the same answer); or nothing at a DNA path below the caller',
  };
}

/** One place that turns a route description into trpc-to-openapi metadata. */
export function route(r: Route): Meta {
  const errorResponses = { ...accessErrors[r.access], ...r.errors } as Record<number, string>;
  if (r.method !== 'GET' || r.paginated) errorResponses[400] ??= 'Invalid body or parameters';
  return {
    access: r.access,
    successStatus: r.successStatus,
    paginated: r.paginated,
    openapi: {
      method: r.method,
      path: r.path,
      tags: r.tags,
      summary: r.summary,
      description: r.description,
      protect: r.access !== 'public',
      successDescription: r.successStatus === 201 ? 'Created' : undefined,
      errorResponses,
      responseHeaders: r.paginated ? paginationHeaders : undefined,
    },
  };
}
