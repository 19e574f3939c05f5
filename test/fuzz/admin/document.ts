import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export type Schema = Record<string, any>;
export type Access = 'public' | 'account' | 'manage' | 'owner' | 'root';

export interface Parameter {
  name: string;
  in: 'query' | 'path';
  required: boolean;
  schema: Schema;
}

/** One admin operation of the committed OpenAPI document. */
export interface Operation {
  id: string;
  method: string;
  /** The path template, e.g. `/x-users/{identifier}`. */
  template: string;
  params: Parameter[];
  body?: Schema;
  access: Access;
  /** Documented statuses. */
  statuses: number[];
}

export interface AdminDocument {
  doc: Schema;
  operations: Operation[];
  /** Resolves `$ref`s (one level at a time, as the generator walks). */
  deref(s: Schema): Schema;
}

export const DOCUMENT_PATH = fileURLToPath(new URL('../../../openapi/openapi.json', import.meta.url));

/**
 * Reads `openapi/openapi.json` as committed, at test time, so a new endpoint or a changed
 * schema is fuzzed without touching this suite. The AI proxy's routes are left out: they
 * have their own fuzzer (the proxy reads bodies differently and calls an upstream).
 */
export function loadAdminDocument(file = DOCUMENT_PATH): AdminDocument {
  const doc = JSON.parse(readFileSync(file, 'utf8')) as Schema;
  const deref = (s: Schema): Schema => {
    let cur = s;
    for (let i = 0; cur && typeof cur.$ref === 'string'; i++) {
      if (i > 20) throw new Error(`$ref cycle at ${s.$ref}`);
      const parts = (cur.$ref as string).replace(/^#\//, '').split('/');
      cur = parts.reduce((o: Schema, p) => o?.[p], doc);
      if (!cur) throw new Error(`unresolved $ref ${s.$ref}`);
    }
    return cur;
  };
  const operations: Operation[] = [];
  for (const [template, item] of Object.entries(doc.paths as Record<string, Schema>)) {
    for (const [method, op] of Object.entries(item)) {
      if (!['get', 'post', 'put', 'delete', 'patch'].includes(method)) continue;
      if (isProxyOperation(op)) continue;
      const params: Parameter[] = ((op.parameters ?? []) as Schema[]).map((p) => deref(p)).map((p) => ({
        name: p.name, in: p.in, required: !!p.required, schema: deref(p.schema ?? {}),
      }));
      const bodySchema = op.requestBody ? deref(op.requestBody).content?.['application/json']?.schema : undefined;
      operations.push({
        id: op.operationId,
        method: method.toUpperCase(),
        template,
        params,
        body: bodySchema ? deref(bodySchema) : undefined,
        access: accessOf(op),
        statuses: Object.keys(op.responses ?? {}).map(Number).filter(Number.isFinite),
      });
    }
  }
  return { doc, operations, deref };
}

function isProxyOperation(op: Schema): boolean {
  const security = JSON.stringify(op.security ?? []);
  return /apiKeyHeader/.test(security) || (op.tags ?? []).includes('AI proxy') || /^proxy-/.test(op.operationId ?? '');
}

/** Each operation's description ends with the key it needs (see docs/decisions.md). */
function accessOf(op: Schema): Access {
  const d = String(op.description ?? '');
  if (!op.security || /No API key needed/i.test(d)) return 'public';
  if (/Root API key/i.test(d)) return 'root';
  if (/Owner API key/i.test(d)) return 'owner';
  if (/manage permission/i.test(d)) return 'manage';
  return 'account';
}

/** `/x-users/{identifier}` → `/x-users/{}`: templates that match the same concrete paths. */
export function shapeOf(template: string): string {
  return template.replace(/\{[^}]+\}/g, '{}');
}
