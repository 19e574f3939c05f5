import type { PooledKey } from '../../../state/provider-keys/key-pool';
import { keyBase, versioned, type CallInfo, type ProviderEndpoint, type Prepared, type ProviderKind } from '../types';

/**
 * `anthropic`: Anthropic's native Messages API — `{Provider}/v1/messages` and
 * `/v1/messages/count_tokens` with `x-api-key` and `anthropic-version` (the client's, else
 * 2023-06-01), the client's `anthropic-beta` passed through. OpenAI-format clients reach it
 * through translation (gateway/formats).
 */
export const ANTHROPIC_VERSION = '2023-06-01';

const SERVES: ReadonlySet<ProviderEndpoint> = new Set<ProviderEndpoint>(['messages', 'count_tokens']);

/** The key's headers with the client's `anthropic-version` and `anthropic-beta`; `base` is shared and never mutated. */
export function anthropicHeaders(base: Record<string, string>, client: Record<string, string>): Record<string, string> {
  const version = client['anthropic-version'];
  const beta = client['anthropic-beta'];
  if (!version && !beta) return base;
  return { ...base, ...(version ? { 'anthropic-version': version } : {}), ...(beta ? { 'anthropic-beta': beta } : {}) };
}

interface Target {
  origin: string;
  messages: string;
  countTokens: string;
  headers: Record<string, string>;
}

const targets = new WeakMap<PooledKey, Target>();

function targetOf(key: PooledKey): Target {
  let t = targets.get(key);
  if (!t) {
    const b = keyBase(key);
    t = {
      origin: b.origin,
      messages: versioned(b.basePath, '/messages'),
      countTokens: versioned(b.basePath, '/messages/count_tokens'),
      headers: { 'x-api-key': key.secret, 'anthropic-version': ANTHROPIC_VERSION },
    };
    targets.set(key, t);
  }
  return t;
}

export const anthropicKind: ProviderKind = {
  type: 'anthropic',
  serves: () => SERVES,
  prepare(key: PooledKey, call: CallInfo): Prepared {
    if (!SERVES.has(call.endpoint)) return { skip: `an Anthropic key has no ${call.endpoint} endpoint` };
    const t = targetOf(key);
    return { origin: t.origin, path: call.endpoint === 'messages' ? t.messages : t.countTokens, headers: anthropicHeaders(t.headers, call.headers), format: 'anthropic' };
  },
};
