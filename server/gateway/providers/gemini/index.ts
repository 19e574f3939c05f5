import type { PooledKey } from '../../../state/provider-keys/key-pool';
import { keyBase, type CallInfo, type ProviderEndpoint, type Prepared, type ProviderKind, type UpstreamWire } from '../types';

/**
 * `gemini`: Google's Gemini API (AI Studio keys), `{Provider}/v1beta/models/{model}:{method}`
 * with the SecretKey in `x-goog-api-key` (never `?key=`: a URL reaches logs). Gemini-format
 * calls go as the client sent them; a stream always asks for server-sent events (`alt=sse`),
 * which is how usage is read on the way (a JSON-array client gets its array re-framed from
 * them, formats/gemini-provider.ts). Chat, Messages and Responses clients reach
 * `:generateContent` translated (formats/gemini-provider.ts), OpenAI embeddings
 * `:batchEmbedContents`.
 */
const SERVES: ReadonlySet<ProviderEndpoint> = new Set<ProviderEndpoint>(['gemini', 'gemini_count', 'gemini_embed']);

/** The Gemini method of a call: a Gemini client's own (its body is for it), else by endpoint (translated embeddings are a batch). */
function methodOf(call: CallInfo): string {
  if (call.method) return call.method;
  if (call.endpoint === 'gemini_count') return 'countTokens';
  if (call.endpoint === 'gemini_embed') return 'batchEmbedContents';
  return call.stream ? 'streamGenerateContent' : 'generateContent';
}

interface Target {
  origin: string;
  models: string;
  headers: Record<string, string>;
}

const targets = new WeakMap<PooledKey, Target>();

function targetOf(key: PooledKey): Target {
  let t = targets.get(key);
  if (!t) {
    const b = keyBase(key);
    // A Provider URL that already names the version (`…/v1beta`) gets no second one.
    const models = /\/v1(beta|alpha)?$/.test(b.basePath) ? `${b.basePath}/models/` : `${b.basePath}/v1beta/models/`;
    t = { origin: b.origin, models, headers: { 'x-goog-api-key': key.secret } };
    targets.set(key, t);
  }
  return t;
}

export const geminiKind: ProviderKind = {
  type: 'gemini',
  serves: () => SERVES,
  prepare(key: PooledKey, call: CallInfo): Prepared {
    if (!SERVES.has(call.endpoint)) return { skip: `a Gemini key has no ${call.endpoint} endpoint` };
    const t = targetOf(key);
    const method = methodOf(call);
    const model = call.model.startsWith('models/') ? call.model.slice(7) : call.model;
    const path = `${t.models}${encodeURIComponent(model)}:${method}${method === 'streamGenerateContent' ? '?alt=sse' : ''}`;
    // The model is in the path: no body names it (request-body.ts, gemini-provider.ts).
    return { origin: t.origin, path, headers: t.headers, format: 'gemini', wire: WIRE };
  },
};

/**
 * Google answers an invalid or expired API key with 400 INVALID_ARGUMENT whose details name the
 * reason `API_KEY_INVALID`: the key's authentication failure, as a 401 is (it disables the key).
 * A key without access is 403 PERMISSION_DENIED and a rate limit 429 RESOURCE_EXHAUSTED, read as
 * those statuses are for every kind.
 */
export function geminiKeyRefused(body: Buffer): boolean {
  return body.length < 65_536 && body.includes('API_KEY_INVALID');
}

const WIRE: UpstreamWire = {
  error: (status, body) => ({ status: status === 400 && geminiKeyRefused(body) ? 401 : status, body }),
};
