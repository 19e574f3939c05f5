import type { PooledKey } from '../../../state/provider-keys/key-pool';
import { isAnthropicHost } from '../../../domain/providers/families';
import { keyBase, OPENAI_PATHS, versioned, type AnthropicEndpoint, type CallInfo, type Endpoint, type GeminiEndpoint, type ProviderEndpoint, type Prepared, type ProviderKind } from '../types';
import { ANTHROPIC_VERSION, anthropicHeaders } from '../anthropic/index';

/**
 * `standard`: an OpenAI-compatible upstream (`{Provider}/v1/...` with `Authorization: Bearer`).
 * It serves every OpenAI-format endpoint, but `/v1/responses` when `config.responses` is
 * false (a provider with chat completions only: Responses calls are translated to chat);
 * `/v1/messages` reaches it translated to chat completions. A key on anthropic.com is
 * Anthropic's API: `/v1/messages` and its token count natively, OpenAI-format chat through
 * Anthropic's OpenAI-compatible `/v1/chat/completions`, Responses calls translated to messages.
 */
const OPENAI_SERVES: ReadonlySet<Endpoint> = new Set(Object.keys(OPENAI_PATHS) as Endpoint[]);
const CHAT_ONLY_SERVES: ReadonlySet<Endpoint> = new Set([...OPENAI_SERVES].filter((e) => e !== 'responses'));
const ANTHROPIC_SERVES: ReadonlySet<Endpoint> = new Set<Endpoint>(['chat', 'messages', 'count_tokens']);

interface Prepared0 {
  origin: string;
  anthropic: boolean;
  serves: ReadonlySet<ProviderEndpoint>;
  paths: Record<Exclude<Endpoint, GeminiEndpoint>, string>;
  /** Headers without per-call extras, shared by every call of the key: never mutated. */
  openaiHeaders: Record<string, string>;
  anthropicHeaders: Record<string, string>;
}

const perKey = new WeakMap<PooledKey, Prepared0>();

function prepared(key: PooledKey): Prepared0 {
  let p = perKey.get(key);
  if (!p) {
    const b = keyBase(key);
    const anthropic = isAnthropicHost(b.host);
    p = {
      origin: b.origin,
      anthropic,
      serves: anthropic ? ANTHROPIC_SERVES : key.config.responses === false ? CHAT_ONLY_SERVES : OPENAI_SERVES,
      paths: {
        ...(Object.fromEntries(Object.entries(OPENAI_PATHS).map(([e, rest]) => [e, versioned(b.basePath, rest)])) as Record<Exclude<Endpoint, AnthropicEndpoint | GeminiEndpoint>, string>),
        messages: versioned(b.basePath, '/messages'),
        count_tokens: versioned(b.basePath, '/messages/count_tokens'),
      },
      openaiHeaders: anthropic
        ? { authorization: `Bearer ${key.secret}`, 'x-api-key': key.secret, 'anthropic-version': ANTHROPIC_VERSION }
        : { authorization: `Bearer ${key.secret}` },
      anthropicHeaders: { 'x-api-key': key.secret, 'anthropic-version': ANTHROPIC_VERSION },
    };
    perKey.set(key, p);
  }
  return p;
}

export const standardKind: ProviderKind = {
  type: 'standard',
  serves: (key) => prepared(key).serves,
  prepare(key: PooledKey, call: CallInfo): Prepared {
    const p = prepared(key);
    if (!p.serves.has(call.endpoint)) return { skip: `this provider has no ${call.endpoint} endpoint` };
    if (call.endpoint === 'messages' || call.endpoint === 'count_tokens') {
      return { origin: p.origin, path: p.paths[call.endpoint], headers: anthropicHeaders(p.anthropicHeaders, call.headers), format: 'anthropic' };
    }
    const beta = call.headers['openai-beta'];
    const headers = beta ? { ...p.openaiHeaders, 'openai-beta': beta } : p.openaiHeaders;
    // `serves` has no Gemini endpoint: those calls arrive here translated.
    return { origin: p.origin, path: p.paths[call.endpoint as Exclude<Endpoint, GeminiEndpoint>], headers, format: 'openai' };
  },
};
