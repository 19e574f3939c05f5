import type { AnyRouter } from '@trpc/server';
import type { Access, Meta } from '../trpc';

/** What the document needs to know about one REST operation, read from its procedure. */
export interface RouteFacts {
  /** `keys.list`: the tRPC path, the source of the operationId. */
  procedure: string;
  method: 'get' | 'put' | 'post' | 'patch' | 'delete';
  /** As trpc-to-openapi writes it in `paths`. */
  path: string;
  access: Access;
  successStatus: 200 | 201;
  paginated: boolean;
  /** Error statuses the route declares (route() already adds the ones its access implies). */
  errors: Record<string, string>;
  /** `.meta({ id })` of the input schema, usable as the name of the request body. */
  inputId?: string;
  pathParams: string[];
}

interface ProcedureLike {
  _def: { meta?: Meta; inputs?: unknown[] };
}

/** Same normalisation as trpc-to-openapi, so facts and `paths` keys line up. */
export const normalizePath = (path: string) => `/${path.replace(/^\/|\/$/g, '')}`;

export const routeKey = (method: string, path: string) => `${method.toLowerCase()} ${path}`;

export function routeFacts(router: AnyRouter): Map<string, RouteFacts> {
  const facts = new Map<string, RouteFacts>();
  const procedures = router._def.procedures as Record<string, ProcedureLike>;
  for (const [procedure, proc] of Object.entries(procedures)) {
    const meta = proc._def.meta;
    const openapi = meta?.openapi;
    if (!openapi || openapi.enabled === false) continue;
    const path = normalizePath(openapi.path);
    const method = openapi.method.toLowerCase() as RouteFacts['method'];
    const pathParams = [...path.matchAll(/\{(.+?)\}/g)].map((m) => m[1]);
    facts.set(routeKey(method, path), {
      procedure,
      method,
      path,
      // route() always sets access; a hand-written meta falls back to what authedProcedure assumes.
      access: meta?.access ?? (openapi.protect === false ? 'public' : 'account'),
      successStatus: meta?.successStatus ?? 200,
      paginated: meta?.paginated ?? Boolean(openapi.responseHeaders),
      errors: Object.fromEntries(Object.entries(openapi.errorResponses ?? {}).map(([k, v]) => [String(k), String(v)])),
      inputId: schemaId(proc._def.inputs?.length === 1 ? proc._def.inputs[0] : undefined),
      pathParams,
    });
  }
  return facts;
}

/** The registry id of a zod schema, looking through `.optional()`. */
function schemaId(schema: unknown): string | undefined {
  let s = schema as { meta?: () => { id?: unknown } | undefined; unwrap?: () => unknown; def?: { type?: string } } | undefined;
  for (let i = 0; s && i < 3; i++) {
    const id = typeof s.meta === 'function' ? s.meta()?.id : undefined;
    if (typeof id === 'string') return id;
    if (s.def?.type !== 'optional' || typeof s.unwrap !== 'function') return undefined;
    s = s.unwrap() as typeof s;
  }
  return undefined;
}
