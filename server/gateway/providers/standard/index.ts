import type { PooledKey } from '../../../state/provider-keys/key-pool';
import { isAnthropicHost } from '../../../domain/providers/families';
import { keyBase, versioned, type CallInfo, type Endpoint, type Prepared, type ProviderKind } from '../types';

/**
 * `standard`: an OpenAI-compatible upstream (`{Provider}/v1/...` with `Authorization: Bearer`),
 * or an Anthropic one. A call to `/v1/messages` goes to `{Provider}/v1/messages` with
 * `x-api-key` and `anthropic-version` whatever the host (many providers serve Anthropic's
 * format there); a key on anthropic.com serves OpenAI-format calls through Anthropic's
 * OpenAI-compatible `/v1/chat/completions` and has no responses or embeddings endpoint.
 */
export const ANTHROPIC_VERSION = '2023-06-01';

const OPENAI_PATHS: Record<Exclude<Endpoint, 'messages'>, string> = {
  chat: '/chat/completions',
  responses: '/responses',
  embeddings: '/embeddings',
};

interface Prepared0 {
  origin: string;
  anthropic: boolean;
  paths: Record<Endpoint, string>;
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
      paths: {
        chat: versioned(b.basePath, OPENAI_PATHS.chat),
        responses: versioned(b.basePath, OPENAI_PATHS.responses),
        embeddings: versioned(b.basePath, OPENAI_PATHS.embeddings),
        messages: versioned(b.basePath, '/messages'),
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
  prepare(key: PooledKey, call: CallInfo): Prepared {
    const p = prepared(key);
    if (call.endpoint === 'messages') {
      const version = call.headers['anthropic-version'];
      const beta = call.headers['anthropic-beta'];
      const headers = version || beta
        ? { ...p.anthropicHeaders, ...(version ? { 'anthropic-version': version } : {}), ...(beta ? { 'anthropic-beta': beta } : {}) }
        : p.anthropicHeaders;
      return { origin: p.origin, path: p.paths.messages, headers, format: 'anthropic' };
    }
    if (p.anthropic && call.endpoint !== 'chat') return { skip: `an Anthropic provider has no ${call.endpoint} endpoint` };
    const beta = call.headers['openai-beta'];
    const headers = beta ? { ...p.openaiHeaders, 'openai-beta': beta } : p.openaiHeaders;
    return { origin: p.origin, path: p.paths[call.endpoint], headers, format: 'openai' };
  },
};
