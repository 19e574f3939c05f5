import type { RouteFacts } from './routes';
import { routeKey } from './routes';
import { operations, type OpenApiDocument, type Schema } from './types';

/** JSON with object keys sorted: two schemas are the same when their canonical forms are. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_k, v) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, v[k]]))
      : v);
}

export const pascalCase = (s: string) =>
  s.split(/[^A-Za-z0-9]+/).filter(Boolean).map((w) => w[0].toUpperCase() + w.slice(1)).join('');

/** A schema that client generators would otherwise name `InlineObject3` / `InlineResponse2001`. */
function isNamable(s: Schema | undefined): boolean {
  if (!s || s.$ref) return false;
  return s.type === 'object' || Boolean(s.properties || s.oneOf || s.anyOf || (s.allOf && s.allOf.length > 1));
}

/**
 * Registers a schema under `preferred` (or `fallback` when that name holds something else),
 * reusing any component that is already the same schema, and returns the reference.
 */
function register(schemas: Record<string, Schema>, schema: Schema, preferred: string, fallback: string): Schema {
  const canon = canonicalJson(schema);
  for (const [name, existing] of Object.entries(schemas)) {
    if (canonicalJson(existing) === canon) return { $ref: `#/components/schemas/${name}` };
  }
  let name = preferred in schemas ? fallback : preferred;
  for (let i = 2; name in schemas; i++) name = `${fallback}${i}`;
  schemas[name] = schema;
  return { $ref: `#/components/schemas/${name}` };
}

/**
 * Gives every inline request body and object response a component name. Bodies take the
 * input's zod id when the input is the body itself (no path parameters), otherwise
 * `<OperationId>Body`; responses `<OperationId>Response`. Stable names keep the generated
 * clients' model names stable as endpoints are added.
 */
export function nameInlineSchemas(doc: OpenApiDocument, facts: Map<string, RouteFacts>): void {
  doc.components ??= {};
  const schemas = (doc.components.schemas ??= {});
  for (const { path, method, op } of operations(doc)) {
    const route = facts.get(routeKey(method, path));
    const base = pascalCase(op.operationId ?? `${method} ${path}`);
    const body = op.requestBody?.content['application/json'];
    if (body && isNamable(body.schema)) {
      const id = route && route.pathParams.length === 0 ? route.inputId : undefined;
      body.schema = register(schemas, body.schema as Schema, id ?? `${base}Body`, `${base}Body`);
    }
    for (const [status, response] of Object.entries(op.responses)) {
      const media = response.content?.['application/json'];
      if (!media || Number(status) >= 400) continue;
      if (isNamable(media.schema)) {
        media.schema = register(schemas, media.schema as Schema, `${base}Response`, `${base}Response`);
      } else if (media.schema?.type === 'array' && isNamable(media.schema.items)) {
        media.schema.items = register(schemas, media.schema.items, `${base}Item`, `${base}Item`);
      }
    }
  }
}
