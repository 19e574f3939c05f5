import { readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Validator } from '@seriousme/openapi-schema-validator';
import { beforeAll, describe, expect, it } from 'vitest';
import { appRouter } from './index';
import { AREA_TAGS, buildOpenApiDocument, type OpenApiDocument } from './openapi';
import { routeFacts, routeKey, type RouteFacts } from './openapi-routes';
import { operations, type Operation, type Schema } from './openapi-types';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const specFile = path.resolve(repo, '..', 'shared', 'spec', 'admin-api.md');

let doc: OpenApiDocument;
let facts: Map<string, RouteFacts>;
beforeAll(() => {
  doc = buildOpenApiDocument();
  facts = routeFacts(appRouter);
});

/**
 * Method+path pairs of the spec's Endpoints section: its tables (`| PUT or POST | \`/x-keys/{id}\` |`)
 * and inline forms (`\`GET /x-bill\``). Query strings are dropped.
 */
function specEndpoints(markdown: string): { method: string; path: string }[] {
  const section = markdown.split(/^## Endpoints$/m)[1]?.split(/^## /m)[0] ?? '';
  const out: { method: string; path: string }[] = [];
  const clean = (p: string) => p.split('?')[0];
  for (const line of section.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    const verbs = cells[1]?.match(/^(GET|POST|PUT|DELETE)( or (GET|POST|PUT|DELETE))*$/) ? cells[1].split(' or ') : null;
    if (line.startsWith('|') && verbs) {
      for (const m of cells[2].matchAll(/`(\/[^`]*)`/g)) for (const v of verbs) out.push({ method: v.toLowerCase(), path: clean(m[1]) });
      continue;
    }
    for (const m of line.matchAll(/`(GET|POST|PUT|DELETE) (\/[^`\s]*)`/g)) out.push({ method: m[1].toLowerCase(), path: clean(m[2]) });
  }
  return out;
}

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

  it('names every endpoint of the spec that the contract implements, and always those of issue 2', () => {
    expect(existsSync(specFile), `spec not found at ${specFile}`).toBe(true);
    const spec = specEndpoints(readFileSync(specFile, 'utf8'));
    // Guards the parser itself: the spec lists about forty method+path pairs.
    expect(spec.length).toBeGreaterThan(30);
    const implemented = new Map([...facts.values()].map((f) => [`${f.method} ${shape(f.path)}`, f]));
    const issue2 = ['get /x-keys', 'post /x-keys', 'get /x-keys/{}', 'put /x-keys/{}', 'post /x-keys/{}', 'delete /x-keys/{}',
      'get /x-conf', 'post /x-conf', 'get /x-config', 'put /x-config', 'post /x-config', 'delete /x-config',
      'get /x-gkey', 'get /x-ekey/{}', 'get /x-dkey/{}'];
    const specKeys = new Set(spec.map((e) => `${e.method} ${shape(e.path)}`));
    for (const k of issue2) expect(specKeys, `spec parser missed ${k}`).toContain(k);
    for (const key of specKeys) {
      const f = implemented.get(key);
      if (!f) {
        expect(issue2, `${key} (issue 2) must be implemented`).not.toContain(key);
        continue;
      }
      expect(op(f.method, f.path), `${key} is implemented but missing from the document`).toBeDefined();
    }
    for (const path of ['/x-keys', '/x-keys/{selector}', '/x-conf', '/x-config', '/x-gkey', '/x-ekey/{text}', '/x-dkey/{text}']) {
      expect(doc.paths, path).toHaveProperty([path]);
    }
  });

  it('has exactly one operation per contract route', () => {
    const inDoc = [...operations(doc)].map(({ method, path: p }) => routeKey(method, p)).sort();
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
    for (const { path: p, method, op: o } of operations(doc)) {
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
    for (const { path: p, method, op: o } of operations(doc)) {
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
    for (const { path: p, method, op: o } of operations(doc)) {
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
      if (/^\/(dashboard\/|models$|v1\/models$)/.test(p)) return ['dashboard'];
      return [...areas.keys()];
    };
    for (const { path: p, op: o } of operations(doc)) {
      expect(o.tags?.length, p).toBe(1);
      expect(expected(p), `${p} tagged ${o.tags}`).toContain(o.tags![0]);
    }
  });

  it('states servers, info and the Field names as the spec writes them', () => {
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

  it('comes out the same every time, in a stable key order', () => {
    expect(JSON.stringify(buildOpenApiDocument())).toBe(JSON.stringify(doc));
    expect(Object.keys(doc)).toEqual(['openapi', 'info', 'servers', 'tags', 'paths', 'components']);
    const paths = Object.keys(doc.paths);
    expect(paths).toEqual([...paths].sort());
    const names = Object.keys(doc.components!.schemas!);
    expect(names).toEqual([...names].sort());
  });
});
