import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../contract/openapi/index';
import type { OpenApiDocument, Schema } from '../../contract/openapi/types';
import { forGenerator, JSON_VALUE } from '../../scripts/openapi/generator-input';
import { BATCH_FILE_OPERATIONS, API_KEY_HEADER_SCHEME, PROXY_DESCRIPTION, PROXY_ROUTES, PROXY_SCHEMAS, PROXY_TAG, STORED_RESPONSE_OPERATIONS } from '../../contract/openapi/proxy';

const unionsIn = (x: unknown, where = ''): string[] => {
  if (!x || typeof x !== 'object') return [];
  const own = (x as Schema).oneOf || (x as Schema).anyOf ? [where] : [];
  return [...own, ...Object.entries(x).flatMap(([k, v]) => unionsIn(v, `${where}/${k}`))];
};

const tiny = (schemas: Record<string, Schema>): OpenApiDocument => ({
  openapi: '3.0.3', info: { title: 't', version: '1' }, paths: {}, components: { schemas },
});

describe('the document as openapi-generator 4.3.1 sees it', () => {
  const doc = buildOpenApiDocument();
  const gen = forGenerator(doc);
  const schemas = gen.components!.schemas!;

  it('leaves the published document untouched', () => {
    expect(JSON.stringify(doc)).toBe(JSON.stringify(buildOpenApiDocument()));
    expect(unionsIn(doc).length).toBeGreaterThan(0);
  });

  it('keeps unions only where a value is any JSON', () => {
    const left = unionsIn(gen).filter((w) => !/^\/components\/schemas\/[^/]+$/.test(w));
    expect(left).toEqual([]);
    for (const w of unionsIn(gen)) {
      const name = w.split('/').pop()!;
      // A named union left over is a pass-through value: no properties for a generator to read.
      expect(schemas[name].properties, name).toBeUndefined();
    }
  });

  it('turns the provider config union into one object keyed by provider_type', () => {
    expect(schemas.ProviderConfig).toMatchObject({ type: 'object', required: ['provider_type'] });
    expect(schemas.ProviderConfig.properties.provider_type.enum).toEqual(['standard', 'anthropic', 'azure', 'vertex', 'bedrock', 'gemini']);
    expect(Object.keys(schemas.ProviderConfig.properties)).toEqual(expect.arrayContaining(['responses', 'deployments', 'base_url', 'private_key_set', 'region', 'access_key_id', 'session_token_set', 'models']));
    expect(schemas.ProviderConfig.discriminator).toBeUndefined();
  });

  it('leaves out the AI proxy routes, their schemas, the x-api-key scheme, tag and description line', () => {
    const proxyPaths = [...PROXY_ROUTES, ...STORED_RESPONSE_OPERATIONS, ...BATCH_FILE_OPERATIONS].map((r) => r.path);
    for (const p of proxyPaths) {
      expect(doc.paths, p).toHaveProperty([p]);
      expect(gen.paths, p).not.toHaveProperty([p]);
    }
    for (const name of PROXY_SCHEMAS) {
      expect(doc.components!.schemas, name).toHaveProperty([name]);
      expect(schemas, name).not.toHaveProperty([name]);
    }
    // Nothing left refers to what was removed.
    const text = JSON.stringify(gen);
    for (const name of PROXY_SCHEMAS) expect(text).not.toContain(`#/components/schemas/${name}"`);
    expect(Object.keys(gen.components!.securitySchemes!)).toEqual(['bearerAuth']);
    expect(doc.components!.securitySchemes).toHaveProperty([API_KEY_HEADER_SCHEME]);
    expect(gen.tags!.map((t) => t.name)).not.toContain(PROXY_TAG.name);
    expect(doc.info.description).toContain(PROXY_DESCRIPTION);
    expect(gen.info.description).not.toContain(PROXY_DESCRIPTION);
    // The admin routes stay, /v1/models among them.
    expect(Object.keys(gen.paths)).toEqual(Object.keys(doc.paths).filter((p) => !proxyPaths.includes(p)));
    expect(gen.paths).toHaveProperty(['/v1/models']);
  });

  it('passes string-or-integer codes through as JSON values', () => {
    expect(schemas.ErrorDetail.properties.code).toEqual({ $ref: `#/components/schemas/${JSON_VALUE}` });
    expect(schemas[JSON_VALUE].properties).toBeUndefined();
  });

  it('merges unions of one primitive type, and names colliding enum members', () => {
    const out = forGenerator(tiny({
      Body: {
        type: 'object',
        properties: {
          mail: { description: 'empty or an email', anyOf: [{ type: 'string', enum: [''] }, { type: 'string', format: 'email' }] },
          order: { type: 'string', enum: ['id', '-id', 'name'] },
          anything: { description: 'free JSON' },
          once: { nullable: true, oneOf: [{ $ref: '#/components/schemas/Other' }] },
        },
      },
      Other: { type: 'object', properties: { a: { type: 'string' } } },
    })).components!.schemas!;
    expect(out.Body.properties.mail).toEqual({ type: 'string', description: 'empty or an email' });
    expect(out.Body.properties.order['x-enum-varnames']).toEqual(['Id', 'IdDesc', 'Name']);
    expect(out.Body.properties.anything).toEqual({ $ref: `#/components/schemas/${JSON_VALUE}` });
    expect(out.Body.properties.once).toEqual({ nullable: true, allOf: [{ $ref: '#/components/schemas/Other' }] });
  });

  it('rewrites a named union component in place, and a shared untyped schema everywhere it is used', () => {
    const shared = { description: 'anything' };
    const out = forGenerator(tiny({
      Mail: { description: 'empty or an email', anyOf: [{ type: 'string', enum: [''] }, { type: 'string', format: 'email' }] },
      Code: { anyOf: [{ type: 'string' }, { type: 'integer' }] },
      Two: { type: 'object', properties: { a: shared, b: shared } },
    })).components!.schemas!;
    expect(out.Mail).toEqual({ type: 'string', description: 'empty or an email' });
    expect(out.Code.properties).toBeUndefined();
    expect(out.Code.anyOf).toBeDefined();
    expect(out.Two.properties).toEqual({ a: { $ref: `#/components/schemas/${JSON_VALUE}` }, b: { $ref: `#/components/schemas/${JSON_VALUE}` } });
  });

  it('requires a merged property only when every variant requires it', () => {
    const out = forGenerator(tiny({
      U: { oneOf: [{ $ref: '#/components/schemas/A' }, { $ref: '#/components/schemas/B' }] },
      A: { type: 'object', required: ['kind', 'a'], properties: { kind: { type: 'string', enum: ['a'] }, a: { type: 'integer' } }, additionalProperties: false },
      B: { type: 'object', required: ['kind'], properties: { kind: { type: 'string', enum: ['b'] }, b: { type: 'string' } }, additionalProperties: false },
    })).components!.schemas!;
    expect(out.U).toEqual({
      type: 'object', required: ['kind'],
      properties: { kind: { type: 'string', enum: ['a', 'b'] }, a: { type: 'integer' }, b: { type: 'string' } },
    });
  });
});
