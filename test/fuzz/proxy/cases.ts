import fc from 'fast-check';
import { HUGE, PROTOTYPE_NAMES, deepJson, withOwnKey } from '../support/hostile';
import type { SentRequest } from '../support/findings';
import { ROUTES, credentialHeaders, type Caller, type Endpoint, type Keys } from './routes';

/**
 * What the answer must be. `refused`: the gateway itself refuses (4xx) and nothing reaches
 * the provider; `client-error`: a 4xx, the provider's own refusal passed through included;
 * `ok`: 200; `any`: whatever is decided, as long as it is not a 5xx.
 */
export type Expectation = 'ok' | 'any' | 'client-error' | 'refused';
const RANK: Record<Expectation, number> = { ok: 0, any: 1, 'client-error': 2, refused: 3 };
const worst = (...e: Expectation[]) => e.reduce((a, b) => (RANK[b] > RANK[a] ? b : a), 'ok');

export interface ProxyCase extends SentRequest {
  path: string;
  endpoint: Endpoint;
  /** Flat name/value list: a header may appear twice. */
  headers: string[];
  body: string;
  expect: Expectation;
  /** Asked for a stream (`"stream": true` on a streaming route, admitted). */
  stream: boolean;
  /** Marks the body, so what reached the mock upstream can be traced to its case. */
  tag: string | null;
  /** Why a 4xx is due (the first refusing ingredient), to group findings by rule. */
  why: string | null;
}

interface Part { expect: Expectation; note: string; why?: string }

/** The rule a bad model name breaks. */
export function modelFault(m: unknown): string {
  if (typeof m !== 'string') return 'model not a string';
  if (m.length === 0 || m.length > 200) return 'model empty or over 200 characters';
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(m)) return 'model with a control character';
  return 'model with a path traversal';
}

/** Model names the gateway must refuse: nothing that is not a usable model name reaches a provider or the usage log. */
export const BAD_MODELS: readonly unknown[] = [
  '', 'a'.repeat(201), '../../etc/passwd', '..', 'a/../b', '..\\..\\windows', 'gpt-4o/../../admin', 'gpt\u0000x', '\u0000', 'gpt\n4o', 'gpt\r\nX-Injected: 1', '\t', 'x\u007f',
  123, 0, null, true, false, [], {}, ['gpt-4o'], { name: 'gpt-4o' },
];
/** Names a provider may well accept: slashes, colons, dots, 200 characters, any script. */
export const GOOD_MODELS = ['gpt-4o-mini', 'gpt-4o', 'o3-mini', 'claude-haiku-4-5', 'text-embedding-3-small', 'mistral-large-latest', 'org/model-x', 'accounts/fz/models/m1', 'gpt-4o:ft-fuzz:2024', 'a'.repeat(200), 'модель-1', 'gpt-4.1'];
/** Names nobody has decided about: no 5xx is all that is asked. */
export const ODD_MODELS = ['gpt-4o ', ' ', 'gpt-\ud800', '/v1/chat/completions', 'gpt-4o?x=1', '%2e%2e%2f', '*', 'gpt-*', '${model}', "gpt' OR '1'='1", 'constructor', '__proto__'];

/** A model name for BAD_MODELS' rule, as the suite reads it (shared with the usage-log check). */
export function isBadModel(m: unknown): boolean {
  if (typeof m !== 'string' || m.length === 0 || m.length > 200) return true;
  // eslint-disable-next-line no-control-regex
  return /[\u0000-\u001f\u007f]/.test(m) || /(^|[/\\])\.\.([/\\]|$)/.test(m);
}

const text = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom('Say hello', 'Bonjour 👋', 'Привет', 'what is 2+2?') },
  { weight: 2, arbitrary: fc.string({ maxLength: 60 }) },
  { weight: 1, arbitrary: fc.constantFrom('a\u0000b', '\ud800', 'line\r\nbreak', '"quoted" \\ back') },
  { weight: 1, arbitrary: fc.constant('x'.repeat(HUGE)) },
);

function model(endpoint: Endpoint): fc.Arbitrary<{ value: unknown } & Part> {
  const fallback = endpoint === 'embeddings' ? 'text-embedding-3-small' : endpoint === 'messages' ? 'claude-haiku-4-5' : 'gpt-4o-mini';
  return fc.oneof(
    { weight: 10, arbitrary: fc.constant({ value: fallback, expect: 'ok' as Expectation, note: '' }) },
    { weight: 4, arbitrary: fc.constantFrom(...GOOD_MODELS).map((value) => ({ value, expect: 'ok' as Expectation, note: `model ${clip(value)}` })) },
    { weight: 4, arbitrary: fc.constantFrom(...BAD_MODELS).map((value) => ({ value, expect: 'refused' as Expectation, note: `bad model ${clip(value)}`, why: modelFault(value) })) },
    { weight: 2, arbitrary: fc.constantFrom(...ODD_MODELS).map((value) => ({ value, expect: 'any' as Expectation, note: `odd model ${clip(value)}` })) },
  );
}

function streamFields(endpoint: Endpoint): fc.Arbitrary<{ fields: Record<string, unknown>; stream: boolean } & Part> {
  // The gateway reads `stream` on every streaming route and `stream_options` on chat.
  const reads = endpoint !== 'embeddings';
  const chat = endpoint === 'chat';
  return fc.oneof(
    { weight: 6, arbitrary: fc.constant({ fields: {}, stream: false, expect: 'ok' as Expectation, note: '' }) },
    { weight: 3, arbitrary: fc.constant({ fields: { stream: false }, stream: false, expect: 'ok' as Expectation, note: 'stream false' }) },
    { weight: 5, arbitrary: fc.constantFrom<Record<string, unknown>>({}, { stream_options: { include_usage: true } }, { stream_options: { include_usage: false } }, { stream_options: {} }).map((extra) => ({
      fields: chat ? { stream: true, ...extra } : { stream: true }, stream: reads, expect: (reads ? 'ok' : 'any') as Expectation, note: `stream true ${chat ? JSON.stringify(extra) : ''}`,
    })) },
    { weight: 3, arbitrary: fc.constantFrom<unknown>('true', 'false', 1, 0, [], {}, 'yes').map((v) => ({
      fields: { stream: v }, stream: false, expect: (reads ? 'refused' : 'any') as Expectation, note: `stream ${JSON.stringify(v)}`, why: '"stream" not a boolean',
    })) },
    { weight: 1, arbitrary: fc.constant({ fields: { stream: null }, stream: false, expect: 'any' as Expectation, note: 'stream null' }) },
    { weight: 2, arbitrary: fc.constantFrom<unknown>('yes', 1, [], true, 'include_usage').map((v) => ({
      fields: { stream: true, stream_options: v }, stream: reads, expect: (chat ? 'refused' : 'any') as Expectation, note: `stream_options ${JSON.stringify(v)}`, why: '"stream_options" not an object',
    })) },
    { weight: 1, arbitrary: fc.constantFrom<unknown>(null, { include_usage: 'true' }, { include_usage: 1 }).map((v) => ({
      fields: { stream: true, stream_options: v }, stream: reads, expect: 'any' as Expectation, note: `stream_options ${JSON.stringify(v)}`,
    })) },
  );
}

/** The rest of the body in each route's format, valid or broken in a way the provider refuses. */
function payload(endpoint: Endpoint): fc.Arbitrary<{ fields: Record<string, unknown> } & Part> {
  const ok = (fields: Record<string, unknown>, note = ''): { fields: Record<string, unknown> } & Part => ({ fields, expect: 'ok', note });
  const valid = text.map((t) => {
    switch (endpoint) {
      case 'chat': return ok({ messages: [{ role: 'user', content: t }] });
      case 'responses': return ok({ input: t });
      case 'embeddings': return ok({ input: t.length > 1000 ? t.slice(0, 1000) : [t, t] });
      case 'messages': return ok({ max_tokens: 64, messages: [{ role: 'user', content: t }] });
    }
  });
  const providerRefuses: fc.Arbitrary<{ fields: Record<string, unknown> } & Part> = fc.constantFrom(
    ...(endpoint === 'chat' ? [{ messages: 'hello' }, {}] : endpoint === 'messages' ? [{ messages: [{ role: 'user', content: 'hi' }] }, { max_tokens: 5 }] : endpoint === 'embeddings' ? [{ input: 42 }] : [{}]),
  ).map((fields) => ({ fields, expect: (endpoint === 'responses' ? 'any' : 'client-error') as Expectation, note: `provider refuses ${JSON.stringify(fields).slice(0, 60)}`, why: 'a body the provider refuses' }));
  const extras = fc.tuple(valid, fc.oneof(
    fc.constantFrom(...PROTOTYPE_NAMES).map((k) => [k, { polluted: true }] as [string, unknown]),
    fc.constantFrom<[string, unknown]>(['temperature', 'hot'], ['max_tokens', -1], ['max_tokens', 1e308], ['n', 2 ** 53 + 2], ['user', '\u0000'], ['metadata', { '\u0000': 1 }], ['tools', deepNested(2000)]),
  )).map(([v, [k, x]]) => ({ fields: withOwnKey(v.fields, k, x), expect: 'any' as Expectation, note: `extra ${k}` }));
  return fc.oneof({ weight: 10, arbitrary: valid }, { weight: 2, arbitrary: providerRefuses }, { weight: 3, arbitrary: extras });
}

function deepNested(depth: number): unknown {
  return JSON.parse(deepJson(depth, 'array'));
}

const contentType = fc.oneof(
  { weight: 20, arbitrary: fc.constant({ value: 'application/json' as string | null, expect: 'ok' as Expectation, note: '' }) },
  { weight: 2, arbitrary: fc.constantFrom('application/json; charset=utf-8', 'Application/JSON').map((value) => ({ value: value as string | null, expect: 'ok' as Expectation, note: `content-type ${value}` })) },
  { weight: 2, arbitrary: fc.constantFrom('text/plain', 'multipart/form-data; boundary=x', 'application/xml').map((value) => ({ value: value as string | null, expect: 'refused' as Expectation, note: `content-type ${value}`, why: 'a content type that is not JSON' })) },
  { weight: 1, arbitrary: fc.constantFrom<string | null>(null, 'application/x-www-form-urlencoded', 'application/octet-stream').map((value) => ({ value, expect: 'any' as Expectation, note: `content-type ${value}` })) },
);

const CALLER_FAULT: Partial<Record<Caller, string>> = {
  none: 'no key', bad: 'an unknown key', malformed: 'a malformed Authorization header', disabled: 'a disabled account', suspended: 'a suspended account', poor: 'a balance below the minimum',
};

const caller = fc.constantFrom<Caller>(...(['funded', 'funded', 'funded', 'funded', 'funded', 'funded', 'funded-x-api-key', 'root', 'root', 'none', 'bad', 'malformed', 'disabled', 'suspended', 'poor'] as Caller[]));

/** Extra headers: the forwarded ones with odd values, many headers, duplicates. */
function extraHeaders(endpoint: Endpoint): fc.Arbitrary<{ headers: [string, string][] } & Part> {
  const version: [string, string][] = endpoint === 'messages' ? [['anthropic-version', '2023-06-01']] : [];
  return fc.oneof(
    { weight: 12, arbitrary: fc.constant({ headers: version, expect: 'ok' as Expectation, note: '' }) },
    // Whether the gateway supplies a default anthropic-version is its choice.
    { weight: 2, arbitrary: fc.constant({ headers: [] as [string, string][], expect: (endpoint === 'messages' ? 'any' : 'ok') as Expectation, note: 'no anthropic-version' }) },
    { weight: 2, arbitrary: fc.constantFrom<[string, string][]>(
      [['anthropic-beta', 'x'.repeat(8000)]], [['openai-beta', 'assistants=v2']], [['anthropic-version', '']], [['anthropic-beta', 'a,b,,c']],
      // 80: with the client's own headers well under the 98 lines uWS reads (uws-parser-limits.test.ts).
      Array.from({ length: 80 }, (_, i) => [`x-fuzz-${i}`, 'v'] as [string, string]), [['accept-encoding', 'gzip, br']], [['x-forwarded-for', '10.0.0.1']],
    ).map((h) => ({ headers: [...version, ...h], expect: 'ok' as Expectation, note: `headers ${h[0][0]}${h.length > 1 ? ` +${h.length - 1}` : ''}` })) },
    { weight: 1, arbitrary: fc.constantFrom<[string, string][]>(
      [['authorization', `Bearer sk-Xvs${'2'.repeat(45)}`]], [['x-api-key', 'sk-nothing']], [['content-encoding', 'gzip']],
    ).map((h) => ({ headers: [...version, ...h], expect: 'any' as Expectation, note: `also ${h[0][0]}` })) },
  );
}

/** Stands for the case's tag in a generated body until the case has its index. */
export const TAG_PLACEHOLDER = '@@fuzz-tag@@';

/** The body with its tag, once the case is numbered. */
export function tagCase<T extends { body: string; tagged: boolean }>(c: T, tag: string): T & { tag: string | null } {
  return { ...c, body: c.body.replaceAll(JSON.stringify(TAG_PLACEHOLDER), JSON.stringify(tag)), tag: c.tagged ? tag : null };
}

/** One proxy call of the body/header/auth fuzzer (sent with undici on kept connections). */
export function proxyCases(keys: Keys): fc.Arbitrary<Omit<ProxyCase, 'index' | 'tag'> & { tagged: boolean }> {
  return fc.constantFrom(...ROUTES).chain((route) => fc.tuple(
    fc.constant(route), caller, model(route.endpoint), streamFields(route.endpoint), payload(route.endpoint), contentType, extraHeaders(route.endpoint),
    fc.oneof(
      { weight: 30, arbitrary: fc.constant<null | { raw: string; expect: Expectation; note: string }>(null) },
      { weight: 3, arbitrary: fc.constantFrom('[]', '"x"', '42', 'null', '', '{', '{"model":', '{"model":"gpt-4o"}garbage', "{'model':'gpt-4o'}", '{"model":"gpt-4o",}').map((raw) => ({ raw, expect: 'refused' as Expectation, note: 'not a JSON object' })) },
      { weight: 1, arbitrary: fc.constantFrom('duplicate model', 'BOM').map((kind) => ({ raw: kind, expect: 'any' as Expectation, note: kind })) },
    ),
  )).map(([route, who, m, s, p, ct, extra, rawBody]) => {
    const cred = credentialHeaders(keys, who);
    let doc: Record<string, unknown> = withOwnKey({ model: m.value, ...p.fields, ...s.fields }, 'fuzz_case', TAG_PLACEHOLDER);
    // A Messages call an OpenAI-format key serves is translated, and unknown fields such as
    // fuzz_case do not survive that; metadata.user_id does (as `user`), so it carries the tag too.
    if (route.endpoint === 'messages') {
      const metadata = Object.hasOwn(doc, 'metadata') ? doc.metadata : {};
      if (typeof metadata === 'object' && metadata !== null && !Array.isArray(metadata)) doc = withOwnKey(doc, 'metadata', withOwnKey(metadata as Record<string, unknown>, 'user_id', TAG_PLACEHOLDER));
    }
    let body: string;
    let tagged = true;
    let bodyExpect: Expectation = worst(m.expect, s.expect, p.expect);
    let bodyNote = [m.note, s.note, p.note].filter(Boolean).join('; ');
    if (!rawBody) body = JSON.stringify(doc);
    else if (rawBody.raw === 'duplicate model') {
      // JSON.parse keeps the last: the gateway must judge the model the provider would see.
      body = `{"model":"gpt-4o-mini",${JSON.stringify(doc).slice(1)}`;
    } else if (rawBody.raw === 'BOM') {
      body = `\ufeff${JSON.stringify(doc)}`;
      bodyExpect = worst(bodyExpect, 'any');
    } else {
      body = rawBody.raw;
      tagged = false;
      bodyExpect = 'refused';
      bodyNote = rawBody.note;
    }
    const headers: string[] = [];
    for (const [k, v] of [...cred.headers, ...(ct.value === null ? [] : [['content-type', ct.value]] as [string, string][]), ...extra.headers]) headers.push(k, v);
    const expect = worst(cred.admitted ? 'ok' : 'refused', bodyExpect, ct.expect, extra.expect);
    const callerWhy = cred.admitted ? undefined : CALLER_FAULT[who];
    const parts: Part[] = [{ expect: cred.admitted ? 'ok' : 'refused', note: '', why: callerWhy }, m, s, p, ct, extra];
    if (rawBody && rawBody.expect === 'refused') parts.push({ expect: 'refused', note: '', why: 'a body that is not a JSON object' });
    const why = expect === 'refused' || expect === 'client-error' ? parts.find((x) => x.expect === expect && x.why)?.why ?? null : null;
    const wantsStream = s.stream && expect !== 'refused';
    return {
      method: 'POST', path: route.path, endpoint: route.endpoint, headers, body, expect, stream: wantsStream, tagged, why,
      note: [`caller ${who}`, bodyNote, ct.note, extra.note].filter(Boolean).join('; '),
    };
  });
}

function clip(v: unknown): string {
  const s = typeof v === 'string' ? JSON.stringify(v) : JSON.stringify(v) ?? String(v);
  return s.length > 40 ? `${s.slice(0, 40)}…` : s;
}
