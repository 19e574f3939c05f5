import { operations, type OpenApiDocument, type Schema } from '../../contract/openapi/types';
import { BATCH_FILE_OPERATIONS, API_KEY_HEADER_SCHEME, PROXY_DESCRIPTION, PROXY_ROUTES, PROXY_SCHEMAS, PROXY_TAG, STORED_RESPONSE_OPERATIONS } from '../../contract/openapi/proxy';

/** Stands in for any JSON value; both generators pass a property-less model through untouched. */
export const JSON_VALUE = 'JsonValue';
const jsonValueRef = () => ({ $ref: `#/components/schemas/${JSON_VALUE}` });

/**
 * The document as openapi-generator 4.3.1 can use it. The published openapi.json keeps its
 * unions (oneOf/anyOf, with discriminators) because they are the truth and modern tools read
 * them; 4.3.1 cannot: typescript-fetch emits code that does not compile for inline unions, for
 * enum-tagged discriminators and for untyped values, and the python generator merges the
 * variants' required fields so no variant deserializes. So, for the generator only:
 *  - a union of objects becomes one object with every variant's properties, required only
 *    where all variants require them (a discriminator like `provider_type` becomes the enum
 *    of all its values);
 *  - a union of one primitive type (`""` or an email) becomes that type;
 *  - a union that mixes in a primitive (`code`: string or integer; `ModelLimits`: object or
 *    string), and any untyped value, becomes `JsonValue`, passed through as plain JSON;
 *  - a one-member union becomes `allOf` of that member.
 * The AI proxy's routes are left out (withoutProxy): they are called with the providers' SDKs.
 * The server's answers and the published document are untouched.
 */
export function forGenerator(doc: OpenApiDocument): OpenApiDocument {
  const out = withoutProxy(structuredClone(doc));
  out.components ??= {};
  const components = (out.components.schemas ??= {});
  // Schema objects can be shared (structuredClone keeps shared references): one answer each.
  const done = new Map<Schema, Schema | undefined>();

  // A member may itself be a union not simplified yet: simplify it before reading its properties.
  const resolve = (s: Schema): Schema => {
    for (let i = 0; s?.$ref && i < 10; i++) s = components[String(s.$ref).replace('#/components/schemas/', '')] ?? {};
    const replaced = visit(s);
    if (replaced && !replaced.$ref) s = replaced;
    if (s?.allOf?.length === 1) return resolve(s.allOf[0]);
    return s;
  };

  /** Walks schema positions only (examples and other JSON are left alone); returns a replacement. */
  const visit = (s: Schema | undefined): Schema | undefined => {
    if (!s || typeof s !== 'object') return undefined;
    if (done.has(s)) return done.get(s);
    done.set(s, undefined);
    const replacement = rewrite(s);
    done.set(s, replacement);
    return replacement;
  };
  const rewrite = (s: Schema): Schema | undefined => {
    if (s.properties) for (const k of Object.keys(s.properties)) s.properties[k] = visit(s.properties[k]) ?? s.properties[k];
    if (s.items) s.items = visit(s.items) ?? s.items;
    if (s.additionalProperties && typeof s.additionalProperties === 'object') {
      s.additionalProperties = visit(s.additionalProperties) ?? s.additionalProperties;
    }
    for (const key of ['allOf', 'oneOf', 'anyOf'] as const) {
      if (Array.isArray(s[key])) s[key] = s[key].map((m: Schema) => visit(m) ?? m);
    }
    const key = s.oneOf ? 'oneOf' : s.anyOf ? 'anyOf' : undefined;
    if (key) return simplifyUnion(s, key, resolve);
    if (Array.isArray(s.enum)) nameEnumMembers(s);
    if (isUntyped(s)) return jsonValueRef();
    return undefined;
  };

  for (const name of Object.keys(components)) {
    const replacement = visit(components[name]);
    // A component that is itself untyped or a mixed union keeps its name, as a plain value.
    if (replacement) components[name] = replacement.$ref ? { description: components[name].description, anyOf: anyJson() } : replacement;
  }
  for (const { op } of operations(out)) {
    for (const p of op.parameters ?? []) if (p.schema) p.schema = visit(p.schema) ?? p.schema;
    for (const media of Object.values(op.requestBody?.content ?? {})) if (media.schema) media.schema = visit(media.schema) ?? media.schema;
    for (const r of Object.values(op.responses)) {
      for (const media of Object.values(r.content ?? {})) if (media.schema) media.schema = visit(media.schema) ?? media.schema;
    }
  }
  components[JSON_VALUE] = { description: 'Any JSON value', anyOf: anyJson() };
  return out;
}

/**
 * The document without the AI proxy's routes, their schemas, the `x-api-key` scheme, the tag and
 * the description's line about them.
 * Generated methods for them would be useless: open request and answer objects, no streaming.
 * The `openai` and `@anthropic-ai/sdk` SDKs are the clients for those routes.
 */
export function withoutProxy(doc: OpenApiDocument): OpenApiDocument {
  for (const r of [...PROXY_ROUTES, ...STORED_RESPONSE_OPERATIONS, ...BATCH_FILE_OPERATIONS]) delete doc.paths[r.path];
  const schemas = doc.components?.schemas ?? {};
  for (const name of PROXY_SCHEMAS) delete schemas[name];
  delete doc.components?.securitySchemes?.[API_KEY_HEADER_SCHEME];
  doc.tags = doc.tags?.filter((t) => t.name !== PROXY_TAG.name);
  if (typeof doc.info.description === 'string') doc.info.description = doc.info.description.split('\n').filter((l) => l !== PROXY_DESCRIPTION).join('\n');
  return doc;
}

const PRIMITIVES = new Set(['string', 'number', 'integer', 'boolean']);
const anyJson = (): Schema[] => [{ type: 'string' }, { type: 'number' }, { type: 'boolean' }, { type: 'object' }];

function isUntyped(s: Schema): boolean {
  return !s.$ref && !s.type && !s.properties && !s.items && !s.allOf && !s.oneOf && !s.anyOf && !s.enum && !s.additionalProperties;
}

/** Returns a replacement when the union cannot stay an object; otherwise rewrites `s` in place. */
function simplifyUnion(s: Schema, key: 'oneOf' | 'anyOf', resolve: (s: Schema) => Schema): Schema | undefined {
  const members: Schema[] = s[key];
  delete s[key];
  delete s.discriminator;
  if (members.length === 1) {
    s.allOf = members;
    delete s.type;
    return undefined;
  }
  const resolved = members.map(resolve);
  const type = resolved[0].type;
  if (PRIMITIVES.has(type) && resolved.every((m) => m.type === type)) {
    // e.g. `""` or an email: the variants' constraints cannot be combined, the type can.
    return { type, ...(s.description ? { description: s.description } : {}), ...(s.nullable ? { nullable: true } : {}) };
  }
  if (!resolved.every((m) => m.type === 'object' || m.properties)) return jsonValueRef();
  const variants = new Map<string, Schema[]>();
  for (const m of resolved) {
    for (const [name, p] of Object.entries((m.properties ?? {}) as Record<string, Schema>)) {
      if (!variants.has(name)) variants.set(name, []);
      variants.get(name)!.push(p);
    }
  }
  const properties: Record<string, Schema> = {};
  for (const [name, vs] of variants) properties[name] = mergeProperty(vs);
  const required = resolved
    .map((m) => new Set<string>(m.required ?? []))
    .reduce((acc, r) => new Set([...acc].filter((x) => r.has(x))));
  s.type = 'object';
  s.properties = properties;
  if (required.size > 0) s.required = [...required];
  else delete s.required;
  delete s.additionalProperties;
  return undefined;
}

function mergeProperty(vs: Schema[]): Schema {
  const first = vs[0];
  if (vs.every((v) => JSON.stringify(v) === JSON.stringify(first))) return first;
  if (vs.every((v) => v.type === 'string' && Array.isArray(v.enum))) {
    return { ...first, enum: [...new Set(vs.flatMap((v) => v.enum))] };
  }
  const description = vs.find((v) => v.description)?.description;
  if (vs.every((v) => v.type && v.type === first.type && !v.$ref)) return { type: first.type, ...(description ? { description } : {}) };
  return jsonValueRef();
}

/**
 * typescript-fetch names enum members from their values with the punctuation dropped, so
 * `id` and `-id` (descending) both become `Id` and the enum does not compile. Explicit names
 * (`x-enum-varnames`, honoured by both generators) keep them apart: `Id`, `IdDesc`.
 */
function nameEnumMembers(s: Schema): void {
  const values = (s.enum as unknown[]).filter((v): v is string => typeof v === 'string');
  if (values.length !== s.enum.length) return;
  const base = (v: string) => v.split(/[^A-Za-z0-9]+/).filter(Boolean).map((w) => w[0].toUpperCase() + w.slice(1)).join('') || 'Empty';
  const plain = values.map(base);
  if (new Set(plain).size === plain.length) return;
  const used = new Set<string>();
  s['x-enum-varnames'] = values.map((v) => {
    let name = v.startsWith('-') ? `${base(v)}Desc` : base(v);
    if (/^[0-9]/.test(name)) name = `N${name}`;
    for (let i = 2; used.has(name); i++) name = `${base(v)}${i}`;
    used.add(name);
    return name;
  });
}
