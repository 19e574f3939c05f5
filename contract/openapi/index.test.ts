import { Validator } from '@seriousme/openapi-schema-validator';
import { beforeAll, describe, expect, it } from 'vitest';
import { appRouter } from '../index';
import { AREA_TAGS, buildOpenApiDocument, type OpenApiDocument } from './index';
import { routeFacts, routeKey, type RouteFacts } from './routes';
import { operations, type Operation, type Schema } from './types';
import { BATCH_FILE_OPERATIONS, ANTHROPIC_ERROR_SCHEMA, API_KEY_HEADER_SCHEME, PROXY_ROUTES, PROXY_TAG, STORED_RESPONSE_OPERATIONS } from './proxy';

let doc: OpenApiDocument;
let facts: Map<string, RouteFacts>;
beforeAll(() => {
  doc = buildOpenApiDocument();
  facts = routeFacts(appRouter);
});

/**
 * The administration API's endpoints, as integrators and the console rely on them. Adding or
 * removing one is a change of the API: edit this list in the same commit.
 */
const ADMIN_ENDPOINTS = [
  'get /healthz',
  'get /x-keys', 'post /x-keys', 'get /x-keys/{selector}', 'put /x-keys/{id}', 'post /x-keys/{id}', 'delete /x-keys/{id}',
  'get /x-conf', 'post /x-conf', 'get /x-config', 'put /x-config', 'post /x-config', 'post /x-config/test-mail', 'delete /x-config',
  'get /x-gkey', 'get /x-ekey/{text}', 'get /x-dkey/{text}',
  'get /x-users', 'post /x-users', 'get /x-users/{identifier}', 'put /x-users/{identifier}', 'post /x-users/{identifier}', 'delete /x-users/{identifier}',
  'get /x-dna', 'get /x-dna/{identifier}', 'post /x-self', 'get /x-info',
  'get /x-bill', 'get /dashboard/bill',
  'get /dashboard/status', 'get /dashboard/info', 'get /dashboard/live', 'get /dashboard/logs', 'get /dashboard/requests', 'get /dashboard/latency', 'get /dashboard/models', 'get /dashboard/news',
  'get /dashboard/batches', 'get /dashboard/batches/{id}',
  'get /models', 'get /v1/models',
  'post /x-news', 'delete /x-news', 'post /x-news/{target}', 'delete /x-news/{target}',
];

const isProxy = (o: Operation) => o.tags?.includes(PROXY_TAG.name) ?? false;
/** The operations that come from contract procedures (everything but the AI proxy's routes). */
const adminOperations = () => [...operations(doc)].filter(({ op: o }) => !isProxy(o));
const op = (method: string, p: string): Operation | undefined => (doc.paths[p] as Record<string, Operation> | undefined)?.[method];
const shape = (p: string) => p.replace(/[A-Za-z_]*\{[^}]+\}/g, '{}');
const refsIn = (x: unknown): string[] => {
  if (!x || typeof x !== 'object') return [];
  const own = typeof (x as Schema).$ref === 'string' ? [(x as Schema).$ref as string] : [];
  return [...own, ...Object.values(x).flatMap(refsIn)];
};

describe('the OpenAPI document', () => {
  it('is valid OpenAPI 3.0 and every $ref resolves', async () => {
    const validator = new Validator();
    const res = await validator.validate(structuredClone(doc) as Record<string, unknown>);
    expect(res.errors ?? []).toEqual([]);
    expect(res.valid).toBe(true);
    expect(doc.openapi).toBe('3.0.3');
    const schemas = doc.components?.schemas ?? {};
    for (const ref of new Set(refsIn(doc))) {
      expect(ref).toMatch(/^#\/components\/schemas\//);
      expect(schemas, ref).toHaveProperty([ref.replace('#/components/schemas/', '')]);
    }
  });

  it('names every endpoint of the administration API, each once, and nothing else', () => {
    expect(new Set(ADMIN_ENDPOINTS).size).toBe(ADMIN_ENDPOINTS.length);
    expect([...facts.keys()].sort()).toEqual([...ADMIN_ENDPOINTS].sort());
    for (const key of ADMIN_ENDPOINTS) {
      const [method, p] = key.split(' ');
      expect(op(method, p), `${key} is missing from the document`).toBeDefined();
    }
  });

  it('has exactly one operation per contract route', () => {
    const inDoc = adminOperations().map(({ method, path: p }) => routeKey(method, p)).sort();
    expect(inDoc).toEqual([...facts.keys()].sort());
  });

  it('answers every error with the Error envelope, and lists the statuses each route can answer', () => {
    const schemas = doc.components?.schemas ?? {};
    expect(Object.keys(schemas).filter((n) => n.startsWith('error.'))).toEqual([]);
    expect(schemas.Error).toMatchObject({ type: 'object', required: ['error'], properties: { error: { $ref: '#/components/schemas/ErrorDetail' } } });
    expect(schemas.ErrorDetail).toMatchObject({
      required: ['message', 'type', 'code'],
      properties: { message: { type: 'string' }, type: { type: 'string' }, code: { anyOf: [{ type: 'string' }, { type: 'integer' }] } },
    });
    for (const { path: p, method, op: o } of adminOperations()) {
      const f = facts.get(routeKey(method, p))!;
      const statuses = Object.keys(o.responses);
      for (const s of statuses.filter((x) => Number(x) >= 400)) {
        expect(o.responses[s].content?.['application/json']?.schema, `${method} ${p} ${s}`).toEqual({ $ref: '#/components/schemas/Error' });
      }
      for (const s of Object.keys(f.errors)) expect(statuses, `${method} ${p}`).toContain(s);
      if (f.access !== 'public') expect(statuses, `${method} ${p}`).toContain('401');
      if (['manage', 'owner', 'root'].includes(f.access)) expect(statuses, `${method} ${p}`).toContain('403');
      if (o.requestBody) expect(statuses, `${method} ${p}`).toEqual(expect.arrayContaining(['400', '413', '415']));
    }
  });

  it('documents 201 where the route creates, 200 elsewhere', () => {
    let created = 0;
    for (const { path: p, method, op: o } of adminOperations()) {
      const f = facts.get(routeKey(method, p))!;
      const success = Object.keys(o.responses).filter((s) => s.startsWith('2'));
      expect(success, `${method} ${p}`).toEqual([String(f.successStatus)]);
      if (f.successStatus === 201) created++;
    }
    expect(op('post', '/x-keys')?.responses['201']).toBeDefined();
    expect(created).toBeGreaterThan(0);
  });

  it('documents the pagination headers on every paginated list', () => {
    const paginated = [...facts.values()].filter((f) => f.paginated);
    expect(paginated.map((f) => f.path)).toContain('/x-keys');
    for (const f of paginated) {
      const ok = op(f.method, f.path)!.responses[String(f.successStatus)];
      expect(Object.keys(ok.headers ?? {}).sort(), f.path).toEqual(['X-Page', 'X-Per-Page', 'X-Total-Count', 'X-Total-Pages']);
      expect(ok.content?.['application/json']?.schema?.type, `${f.path} answers a bare array`).toBe('array');
      const params = (op(f.method, f.path)!.parameters ?? []).map((x) => x.name);
      expect(params, f.path).toEqual(expect.arrayContaining(['page', 'size']));
    }
  });

  it('puts the Bearer scheme on every route that needs a key, and none on public ones', () => {
    expect(doc.components?.securitySchemes?.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    for (const { path: p, method, op: o } of adminOperations()) {
      const f = facts.get(routeKey(method, p))!;
      if (f.access === 'public') expect(o.security, p).toBeUndefined();
      else expect(o.security, p).toEqual([{ bearerAuth: [] }]);
    }
    expect(op('get', '/healthz')?.security).toBeUndefined();
  });

  it('tags every operation with its area, each tag described', () => {
    const areas = new Map<string, string>(AREA_TAGS.map((t) => [t.name, t.description]));
    expect(doc.tags?.map((t) => t.name)).toEqual([...areas.keys()]);
    for (const t of doc.tags ?? []) expect(t.description, t.name).toBeTruthy();
    const expected = (p: string): string[] => {
      if (/^\/x-keys(\/|$)/.test(p)) return ['provider keys'];
      if (/^\/x-conf(ig)?$/.test(p)) return ['configuration'];
      if (/^\/x-(users|dna|self|info)(\/|$)/.test(p)) return ['accounts'];
      if (/^\/x-news(\/|$)/.test(p)) return ['news'];
      if (/^\/(x-bill|dashboard\/bill)$/.test(p)) return ['billing'];
      if (/^\/(x-gkey|x-ekey\/|x-dkey\/|healthz$)/.test(p)) return ['helpers'];
      if (p === '/dashboard/news') return ['news', 'dashboard'];
      if ([...PROXY_ROUTES, ...STORED_RESPONSE_OPERATIONS, ...BATCH_FILE_OPERATIONS].some((r) => r.path === p)) return [PROXY_TAG.name];
      if (/^\/(dashboard\/|models$|v1\/models$)/.test(p)) return ['dashboard'];
      return [...areas.keys()];
    };
    for (const { path: p, op: o } of operations(doc)) {
      expect(o.tags?.length, p).toBe(1);
      expect(expected(p), `${p} tagged ${o.tags}`).toContain(o.tags![0]);
    }
  });

  it('states servers, info and the Field names as the API spells them', () => {
    expect(doc.servers?.[0]).toMatchObject({ url: 'http://{host}:{port}', variables: { host: { default: '127.0.0.1' }, port: { default: '8080' } } });
    expect(doc.info).toMatchObject({ title: expect.any(String), version: expect.any(String), license: { name: 'Apache-2.0' } });
    const schemas = doc.components!.schemas!;
    expect(Object.keys(schemas.ProviderKey.properties)).toEqual(expect.arrayContaining(['ID', 'Name', 'Level', 'Provider', 'Status', 'config', 'SecretHint']));
    expect(Object.keys(schemas.ProviderKeyCreate.properties)).toEqual(['Name', 'Level', 'Provider', 'SecretKey', 'Status', 'config']);
    expect(schemas.ProviderKeyCreate.required).toEqual(['Provider', 'SecretKey']);
    expect(Object.keys(schemas.BillInfo.properties)).toEqual(expect.arrayContaining(['object', 'daily_costs', 'usage_summary', 'total_requests', 'token_summary']));
  });

  it('names every request body and object response, so client model names do not shift', () => {
    for (const { path: p, method, op: o } of operations(doc)) {
      const body = o.requestBody?.content['application/json']?.schema;
      if (body) expect(body.$ref, `${method} ${p} body`).toBeDefined();
      for (const [s, r] of Object.entries(o.responses)) {
        const schema = r.content?.['application/json']?.schema;
        if (!schema) continue;
        const named = schema.$ref ?? (schema.type === 'array' ? (schema.items.$ref ?? schema.items.type) : undefined);
        expect(named, `${method} ${p} ${s}`).toBeDefined();
      }
    }
    expect(op('post', '/x-keys')!.requestBody!.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/ProviderKeyCreate' });
    // PUT and POST /x-keys/{id} take the same body: one component.
    expect(op('put', '/x-keys/{id}')!.requestBody).toEqual(op('post', '/x-keys/{id}')!.requestBody);
  });

  it('documents the AI proxy routes: open bodies with model required, JSON or event-stream answers, every status the proxy answers', () => {
    expect(PROXY_ROUTES.map((r) => r.path)).toEqual([
      '/v1/chat/completions', '/v1/responses', '/v1/embeddings', '/v1/messages', '/v1/messages/count_tokens', '/v1/completions', '/v1/moderations', '/v1/rerank',
      '/v1/images/generations', '/v1/images/edits', '/v1/images/variations', '/v1/audio/transcriptions', '/v1/audio/translations', '/v1/audio/speech',
    ]);
    expect(op('get', '/v1/models'), 'the model list stays a contract route').toBeDefined();
    const schemas = doc.components!.schemas!;
    expect(doc.components?.securitySchemes?.[API_KEY_HEADER_SCHEME]).toMatchObject({ type: 'apiKey', in: 'header', name: 'x-api-key' });
    const proxied = [...operations(doc)].filter(({ op: o }) => isProxy(o));
    expect(proxied.map(({ method, path: p }) => `${method} ${p}`).sort())
      .toEqual([...PROXY_ROUTES.map((r) => `post ${r.path}`), ...[...STORED_RESPONSE_OPERATIONS, ...BATCH_FILE_OPERATIONS].map((r) => `${r.method} ${r.path}`)].sort());
    for (const r of BATCH_FILE_OPERATIONS) {
      const o = op(r.method, r.path)!;
      expect(o.description, r.path).toContain(`\`${r.alias}\``);
      expect(o.security).toEqual([{ bearerAuth: [] }, { [API_KEY_HEADER_SCHEME]: [] }]);
      expect(o.responses['401'].content!['application/json'].schema, r.path).toEqual({ $ref: `#/components/schemas/${r.anthropic ? ANTHROPIC_ERROR_SCHEMA : 'Error'}` });
    }
    for (const r of STORED_RESPONSE_OPERATIONS) {
      const o = op(r.method, r.path)!;
      expect(o.description, r.path).toContain(`\`${r.alias}\``);
      expect(o.requestBody).toBeUndefined();
      expect(o.parameters![0]).toMatchObject({ name: 'id', in: 'path', required: true });
      expect(Object.keys(o.responses).sort()).toEqual(['200', '400', '401', '403', '404', '502', '503', '504']);
    }
    for (const r of PROXY_ROUTES) {
      const o = op('post', r.path)!;
      expect(o.description, r.path).toContain(`\`${r.alias}\``);
      expect(o.security).toEqual([{ bearerAuth: [] }, { [API_KEY_HEADER_SCHEME]: [] }]);
      const bodyRef = o.requestBody!.content[r.upload ? 'multipart/form-data' : 'application/json'].schema!.$ref as string;
      const body = schemas[bodyRef.replace('#/components/schemas/', '')];
      expect(body, r.path).toMatchObject({ type: 'object', required: expect.arrayContaining(['model']), additionalProperties: true });
      expect(body.properties.model.type).toBe('string');
      // A form's `stream` is the text "true" or "false".
      if (r.streams) expect(body.properties.stream.type, r.path).toBe(r.upload ? 'string' : 'boolean');
      if (r.path === '/v1/chat/completions') expect(body.properties.stream_options.properties.include_usage.type).toBe('boolean');
      const media = Object.keys(o.responses['200'].content ?? {});
      expect(media, r.path).toEqual([...(r.audio ? ['audio/mpeg'] : []), 'application/json', ...(r.streams || r.audio ? ['text/event-stream'] : [])]);
      expect(Object.keys(o.responses).sort()).toEqual(['200', '400', '401', '402', '403', '413', '415', '429', '502', '503', '504']);
      const errorSchema = { $ref: `#/components/schemas/${r.anthropic ? ANTHROPIC_ERROR_SCHEMA : 'Error'}` };
      for (const s of Object.keys(o.responses).filter((x) => x !== '200')) {
        expect(o.responses[s].content?.['application/json']?.schema, `${r.path} ${s}`).toEqual(errorSchema);
      }
      expect(Object.keys(o.responses['429'].headers ?? {})).toEqual(expect.arrayContaining(['Retry-After', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'X-RateLimit-Scope']));
    }
    expect(schemas[ANTHROPIC_ERROR_SCHEMA]).toMatchObject({ required: ['type', 'error'], properties: { type: { enum: ['error'] } } });
  });

  it('comes out the same every time, in a stable key order', () => {
    expect(JSON.stringify(buildOpenApiDocument())).toBe(JSON.stringify(doc));
    expect(Object.keys(doc)).toEqual(['openapi', 'info', 'servers', 'tags', 'paths', 'components']);
    const paths = Object.keys(doc.paths);
    expect(paths).toEqual([...paths].sort());
    const names = Object.keys(doc.components!.schemas!);
    expect(names).toEqual([...names].sort());
  });
});
