import fc from 'fast-check';
import type { AdminDocument, Operation, Parameter } from './document';
import { shapeOf } from './document';
import { SchemaArbitraries } from './schema-arbitrary';
import { hints, isProtected, type World } from './world';
import { BROKEN_ENCODINGS, HOSTILE_STRINGS, PROTOTYPE_NAMES, deepJson, hostileString, percentEncode } from '../support/hostile';
import type { SentRequest } from '../support/findings';

/** Path segments that address the collection itself once the URL is resolved. */
const SAME_COLLECTION = new Set(['', '.', '%2e']);

export type Actor = 'root' | 'sub' | 'none' | 'bad' | 'malformed';

export interface AdminRequest extends SentRequest {
  /** `documented`: an operation of the document; `method`: its path with another method; `unknown`: a path it does not have. */
  kind: 'documented' | 'method' | 'unknown';
  op?: Operation;
  /** Path template (or `(unknown path)`), for grouping findings. */
  shape: string;
  actor: Actor;
  /** May change the database: sent alone, with a fingerprint before and after. */
  write: boolean;
  /** A HEAD on a path that has a GET: the server answers it as that GET (docs/decisions.md). */
  headOfGet?: boolean;
  headers: Record<string, string>;
  body?: string;
}

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS', 'PURGE'];

/** Builds the arbitrary of one admin request: operation, actor, path, query, headers, body. */
export function adminRequests(api: AdminDocument, world: World): fc.Arbitrary<Omit<AdminRequest, 'index'>> {
  const base = hints();
  // `Name` is a provider key's label on /x-keys and a username on /x-users.
  const keySchemas = new SchemaArbitraries(api.deref, { ...base, Name: fc.constantFrom('openai-1', 'anthropic main', '', 'ключ') });
  const accountSchemas = new SchemaArbitraries(api.deref, base);
  const schemasFor = (op: Operation) => (op.id.startsWith('keys-') ? keySchemas : accountSchemas);
  const schemas = accountSchemas;
  const ops = api.operations;
  const shapes = new Map<string, Set<string>>();
  for (const op of ops) {
    const s = shapeOf(op.template);
    if (!shapes.has(s)) shapes.set(s, new Set());
    shapes.get(s)!.add(op.method);
  }

  const actor = fc.constantFrom<Actor>(...(['root', 'root', 'root', 'root', 'sub', 'sub', 'sub', 'none', 'bad', 'malformed'] as Actor[]));
  const documented = fc.constantFrom(...ops).chain((op) => fc.tuple(fc.constant(op), actor, pathOf(op), queryOf(op), bodyOf(op)))
    .map(([op, who, path, query, body]) => build('documented', op.method, path + query, op, who, body));

  const methodMutant = fc.constantFrom(...ops).chain((op) => {
    const other = METHODS.filter((m) => !shapes.get(shapeOf(op.template))!.has(m));
    return fc.tuple(fc.constant(op), fc.constantFrom(...other), actor, pathOf(op), bodyOf(op));
  }).map(([op, method, who, path, body]) => ({
    ...build('method', method, path, op, who, method === 'GET' || method === 'HEAD' ? undefined : body),
    headOfGet: method === 'HEAD' && shapes.get(shapeOf(op.template))!.has('GET'),
  }));

  const unknownPath = fc.tuple(
    fc.oneof(
      fc.stringMatching(/^[a-z0-9-]{1,12}$/).map((s) => `/fz-${s}`),
      fc.tuple(fc.constantFrom(...ops.map((o) => o.template)), fc.stringMatching(/^[a-z0-9]{1,8}$/)).map(([t, s]) => `${t.replace(/\{[^}]+\}/g, '1')}/${s}/${s}`),
      fc.stringMatching(/^[a-z]{1,10}$/).map((s) => `/dashboard/fz${s}`),
      fc.stringMatching(/^[a-z]{1,10}$/).map((s) => `/v1/fz-${s}`),
      fc.constantFrom('/x-userz', '/x-users-', '/xusers', '/v2/chat/completions', '/x-keys/1/2/3', '/dashboard', '/x-'),
    ),
    fc.constantFrom(...METHODS),
    actor,
  ).map(([path, method, who]) => build('unknown', method, path, undefined, who, undefined));

  return fc.oneof({ weight: 85, arbitrary: documented }, { weight: 7, arbitrary: methodMutant }, { weight: 8, arbitrary: unknownPath });

  function build(kind: AdminRequest['kind'], method: string, target: string, op: Operation | undefined, who: Actor, body: { text: string; type: string | null; note: string } | undefined): Omit<AdminRequest, 'index'> {
    const headers: Record<string, string> = {};
    const auth = authorization(world, who);
    if (auth) headers[auth[0]] = auth[1];
    if (body?.type) headers['content-type'] = body.type;
    let path = target;
    // Writes must not take away the accounts the fuzzer acts as.
    if (op && !READ_METHODS.has(method) && /\{identifier\}/.test(op.template)) {
      const m = /^\/x-users\/([^/?]*)(.*)$/.exec(path);
      if (m && isProtected(world, m[1])) path = `/x-users/${percentEncode(world.victims[m[1].length % world.victims.length])}${m[2]}`;
    }
    return {
      kind, op, method, path, headers, actor: who, body: body?.text,
      shape: kind === 'unknown' ? '(unknown path)' : op!.template,
      write: !READ_METHODS.has(method),
      note: [kind !== 'documented' ? kind : '', body?.note ?? ''].filter(Boolean).join('; ') || undefined,
    };
  }

  function pathOf(op: Operation): fc.Arbitrary<string> {
    const params = op.params.filter((p) => p.in === 'path');
    if (!params.length) return fc.constant(op.template);
    return fc.tuple(...params.map((p) => pathValue(p))).map((values) => {
      let t = op.template;
      params.forEach((p, i) => { t = t.replace(`{${p.name}}`, values[i]); });
      return t;
    });
  }

  /**
   * A path segment, already encoded: a known row, a schema value, a hostile one, or broken
   * encoding. Never empty or a lone dot: `/x-keys/` and `/x-keys/.` are `/x-keys` (trailing
   * slashes are ignored, dot segments resolved), another operation that this one's
   * expectations would misjudge. (`..` stays: it leaves the route entirely.)
   */
  function pathValue(p: Parameter): fc.Arbitrary<string> {
    const known = fc.constantFrom(...knownFor(p.name));
    return fc.oneof(
      { weight: 6, arbitrary: known.map(percentEncode) },
      { weight: 2, arbitrary: schemas.valid(p.schema, p.name).map((v) => percentEncode(String(v))) },
      { weight: 3, arbitrary: hostileString.map((v) => percentEncode(v)) },
      { weight: 1, arbitrary: fc.tuple(known, fc.constantFrom(...BROKEN_ENCODINGS)).map(([k, b]) => `${percentEncode(k)}${b}`) },
      { weight: 1, arbitrary: fc.constantFrom('..', '..%2F..%2Fetc%2Fpasswd', '%2e%2e', '.%00.', '1%00', 'a%0d%0aX-Injected:%201') },
    ).filter((segment) => !SAME_COLLECTION.has(segment.toLowerCase()));
  }

  function knownFor(name: string): string[] {
    switch (name) {
      case 'id': return [...world.keyIds, '0', '-1', '1.5', '999999', '2147483648', '9007199254740993', '1e3', '0x1'];
      case 'selector': return [...world.keyIds, 'L1', 'L0', 'L1000', 'L1001', 'L-1', 'api.openai.com', '127.0.0.1:9', 'https://api.openai.com', 'l1'];
      case 'text': return [...world.ciphertexts, 'v1.', 'v1.AAAA', 'hello', 'x'.repeat(4096), 'x'.repeat(4097)];
      default: return [...world.identifiers, 'L1', 'G0', 'R0', 'R1', 'T0', 'F1', 'L99999999999', '.1.', '.1.999.', '0', '-1', '999999', '2147483648', 'nobody@fuzz.test'];
    }
  }

  function queryOf(op: Operation): fc.Arbitrary<string> {
    const params = op.params.filter((p) => p.in === 'query');
    const each = params.map((p) => fc.oneof(
      { weight: p.required ? 1 : 8, arbitrary: fc.constant<string[]>([]) },
      { weight: 5, arbitrary: queryValues(p, schemas.valid(p.schema, p.name)) },
      { weight: 1, arbitrary: queryValues(p, schemas.invalid(p.schema)) },
    ));
    const extras = fc.oneof(
      { weight: 8, arbitrary: fc.constant<string[]>([]) },
      { weight: 2, arbitrary: fc.tuple(fc.constantFrom(...PROTOTYPE_NAMES), fc.constantFrom('1', '', 'x', '__proto__')).map(([k, v]) => [`${percentEncode(k)}=${percentEncode(v)}`]) },
      { weight: 1, arbitrary: fc.tuple(hostileString.filter((s) => s.length < 300), hostileString.filter((s) => s.length < 300)).map(([k, v]) => [`${percentEncode(k)}=${percentEncode(v)}`]) },
      { weight: 1, arbitrary: fc.constantFrom(...BROKEN_ENCODINGS).map((b) => [`${params[0]?.name ?? 'q'}=${b}`, `${b}=1`]) },
      { weight: 1, arbitrary: fc.constantFrom(['page'], ['page='], ['=1'], ['&&&'], ['page[]=1'], ['size=1&size=2&size=3']) },
    );
    return fc.tuple(fc.tuple(...each), extras, fc.integer({ min: 0, max: 9 }).map((n) => n === 0)).map(([parts, extra, duplicate]) => {
      const flat = parts.flat();
      // A parameter sent twice with different values.
      if (duplicate && flat.length) flat.push(flat[0].replace(/=.*$/, '=2'));
      const all = [...flat, ...extra];
      return all.length ? `?${all.join('&')}` : '';
    });
  }

  function queryValues(p: Parameter, values: fc.Arbitrary<unknown>): fc.Arbitrary<string[]> {
    return values.map((v) => {
      const list = Array.isArray(v) && p.schema.type === 'array' ? v : [v];
      return list.map((x) => `${percentEncode(p.name)}=${percentEncode(asQueryText(x))}`);
    });
  }

  /** The body as sent: JSON of a (broken) object, or something that is not one, with a content type. */
  function bodyOf(op: Operation): fc.Arbitrary<{ text: string; type: string | null; note: string } | undefined> {
    if (!op.body) {
      return fc.oneof(
        { weight: 19, arbitrary: fc.constant(undefined) },
        { weight: 1, arbitrary: fc.constant({ text: '{"keys":["PRICING"],"unexpected":true}', type: 'application/json', note: 'body where none is taken' }) },
      );
    }
    const json = schemasFor(op).body(op.body).map((g) => ({ text: JSON.stringify(g.value), note: g.note }));
    const raw = fc.oneof(
      fc.constantFrom('[]', '"x"', '42', 'null', 'true', '', ' ', '{', '{"a":', '{"Name":"a",}', "{'a':1}", '{"a":1}garbage', '\ufeff{}', 'NaN', '{"a":NaN}', '{"a":Infinity}', '{"a":1e999}')
        .map((text) => ({ text, note: 'not a JSON object' })),
      fc.constantFrom(
        { text: deepJson(10_000, 'array'), note: 'array nested 10,000 deep' },
        { text: deepJson(10_000, 'object'), note: 'object nested 10,000 deep' },
        { text: `{"config":${deepJson(100_000, 'array')}}`, note: 'config nested 100,000 deep' },
        { text: `{"ModelLimits":${deepJson(5_000, 'object')}}`, note: 'ModelLimits nested 5,000 deep' },
        { text: '{"__proto__":{"isAdmin":true,"role":"root"},"constructor":{"prototype":{"x":1}}}', note: 'prototype pollution' },
      ),
      json.map((b) => ({ text: duplicateFirstKey(b.text), note: `${b.note}; duplicate key` })),
      json.map((b) => ({ text: `\ufeff${b.text}`, note: `${b.note}; BOM` })),
    );
    const text = fc.oneof({ weight: 16, arbitrary: json }, { weight: 4, arbitrary: raw }, { weight: 1, arbitrary: fc.constant({ text: `{"Name":"${'a'.repeat(5 * 1024 * 1024)}"}`, note: 'over MAX_BODY_BYTES' }) });
    const type = fc.oneof(
      { weight: 30, arbitrary: fc.constant('application/json') },
      { weight: 2, arbitrary: fc.constantFrom('application/json; charset=utf-8', 'APPLICATION/JSON', 'application/json;charset=UTF-16') },
      { weight: 3, arbitrary: fc.constantFrom<string | null>(null, 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonx', 'application/xml', '*/*', '') },
    );
    return fc.oneof({ weight: 1, arbitrary: fc.constant(undefined) }, { weight: 12, arbitrary: fc.tuple(text, type).map(([t, ct]) => ({ ...t, type: ct })) });
  }
}

function asQueryText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' && Object.is(v, -0)) return '-0';
  if (v === undefined) return '';
  if (typeof v === 'object' && v !== null) return JSON.stringify(v);
  return String(v);
}

/** `{"A":1,"B":2}` → `{"A":"dup","A":1,"B":2}`: which one wins is the parser's choice. */
function duplicateFirstKey(text: string): string {
  const m = /^\{("(?:[^"\\]|\\.)*"):/.exec(text);
  return m ? `{${m[1]}:${JSON.stringify(HOSTILE_STRINGS[text.length % HOSTILE_STRINGS.length])},${text.slice(1)}` : text;
}

export function authorization(world: World, who: Actor): [string, string] | null {
  switch (who) {
    case 'root': return ['authorization', `Bearer ${world.rootKey}`];
    case 'sub': return ['authorization', `Bearer ${world.subKey}`];
    case 'none': return null;
    // The right shape, a key nobody has.
    case 'bad': return ['authorization', `Bearer sk-Xvs${'0'.repeat(45)}`];
    case 'malformed': return ['authorization', `Basic ${Buffer.from(`root:${world.rootKey}`).toString('base64')}`];
  }
}
