/**
 * Where a provider key keeps its files: OpenAI's Files API (`{Provider}/v1/files`), which only
 * an OpenAI-compatible (`standard`) key speaks natively. Azure, Vertex, Bedrock, Gemini and
 * Anthropic keys have files or batches of their own shapes (or none): they are never given a
 * file, so a batch naming one never needs a translation (docs/proxy.md, "Files and batches").
 */
import type { PooledKey } from '../../state/provider-keys/key-pool';
import { isAnthropicHost } from '../../domain/providers/families';
import type { ProviderKinds } from '../providers/registry';
import { keyBase, versioned } from '../providers/types';

export interface FilesTarget {
  origin: string;
  /** `…/v1/files`, below which `/{id}` and `/{id}/content` are. */
  path: string;
  headers: Record<string, string>;
}

const targets = new WeakMap<PooledKey, FilesTarget>();

/** The key's Files API, or null when its kind has none in OpenAI's shape. */
export function filesTarget(kinds: Pick<ProviderKinds, 'of'>, key: PooledKey): FilesTarget | null {
  if (kinds.of(key).type !== 'standard') return null;
  let t = targets.get(key);
  if (!t) {
    const b = keyBase(key);
    if (isAnthropicHost(b.host)) return null;
    t = { origin: b.origin, path: versioned(b.basePath, '/files'), headers: { authorization: `Bearer ${key.secret}` } };
    targets.set(key, t);
  }
  return t;
}
