import { HTTP_METHODS, type OpenApiDocument, type Operation, type PathItem } from './types';

const TOP = ['openapi', 'info', 'servers', 'security', 'tags', 'paths', 'components'];
const OPERATION = ['tags', 'summary', 'description', 'operationId', 'security', 'parameters', 'requestBody', 'responses', 'deprecated'];

function ordered<T extends object>(obj: T, first: string[], sortRest = false): T {
  const keys = Object.keys(obj);
  const known = first.filter((k) => keys.includes(k));
  const rest = keys.filter((k) => !first.includes(k));
  if (sortRest) rest.sort();
  const src = obj as Record<string, unknown>;
  return Object.fromEntries([...known, ...rest].map((k) => [k, src[k]])) as T;
}

const sortedKeys = <T extends object>(obj: T, compare?: (a: string, b: string) => number): T => {
  const src = obj as Record<string, unknown>;
  return Object.fromEntries(Object.keys(src).sort(compare).map((k) => [k, src[k]])) as T;
};

/**
 * One key order whatever order the routers were assembled in: paths, components and status
 * codes sorted, operations in a fixed keyword order. Schema bodies keep zod-openapi's order,
 * which follows the contract's field order (ID first, as integrators read it).
 */
export function canonicalOrder(doc: OpenApiDocument): OpenApiDocument {
  const paths: Record<string, PathItem> = {};
  for (const path of Object.keys(doc.paths).sort()) {
    const item = doc.paths[path];
    const out: PathItem = {};
    for (const m of HTTP_METHODS) {
      const op = item[m];
      if (!op) continue;
      const o = ordered(op, OPERATION) as Operation;
      o.responses = sortedKeys(o.responses);
      out[m] = o;
    }
    for (const k of Object.keys(item)) if (!(HTTP_METHODS as string[]).includes(k)) out[k] = item[k];
    paths[path] = out;
  }
  const components = doc.components ? sortedKeys(doc.components) : undefined;
  if (components) {
    for (const k of Object.keys(components)) {
      const v = components[k];
      if (v && typeof v === 'object') components[k] = sortedKeys(v as object);
    }
  }
  return ordered({ ...doc, paths, ...(components ? { components } : {}) }, TOP, true);
}
