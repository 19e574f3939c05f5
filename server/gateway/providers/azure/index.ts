import type { PooledKey } from '../../../state/provider-keys/key-pool';
import { keyBase, type CallInfo, type Endpoint, type Prepared, type ProviderEndpoint, type ProviderKind } from '../types';

/**
 * `azure` (cloud-hosted deployments): `{Provider}/openai/deployments/{deployment}/{chat/completions|embeddings|completions|images/…|audio/…}?api-version=`
 * with the `api-key` header. The deployment comes from `config.deployments[model]` (a `*`
 * entry serves any other model); the api-version from `config.api_versions[model]`, else
 * the AZURE_API_VERSION setting. Answers are in the OpenAI format. A model without a
 * deployment, or another endpoint, skips the key: the next key or Level serves it.
 */
const ENDPOINTS: Partial<Record<ProviderEndpoint, string>> = {
  chat: 'chat/completions',
  embeddings: 'embeddings',
  completions: 'completions',
  images: 'images/generations',
  'image-edits': 'images/edits',
  transcriptions: 'audio/transcriptions',
  translations: 'audio/translations',
  speech: 'audio/speech',
};

const SERVES: ReadonlySet<Endpoint> = new Set(Object.keys(ENDPOINTS) as Endpoint[]);

interface AzureConfig {
  deployments: Record<string, string>;
  apiVersions: Record<string, string>;
}

const configs = new WeakMap<PooledKey, AzureConfig>();

function configOf(key: PooledKey): AzureConfig {
  let c = configs.get(key);
  if (!c) {
    const strings = (v: unknown): Record<string, string> => {
      if (typeof v !== 'object' || v === null) return {};
      return Object.fromEntries(Object.entries(v).filter(([, s]) => typeof s === 'string')) as Record<string, string>;
    };
    c = { deployments: strings(key.config.deployments), apiVersions: strings(key.config.api_versions) };
    configs.set(key, c);
  }
  return c;
}

export function createAzureKind(defaultApiVersion: string): ProviderKind {
  return {
    type: 'azure',
    serves: () => SERVES,
    prepare(key: PooledKey, call: CallInfo): Prepared {
      const endpoint = ENDPOINTS[call.endpoint];
      if (endpoint === undefined) return { skip: `a cloud-hosted deployment has no ${call.endpoint} endpoint here` };
      const c = configOf(key);
      const deployment = Object.hasOwn(c.deployments, call.model) ? c.deployments[call.model] : c.deployments['*'];
      if (!deployment) return { skip: `no deployment for model ${call.model}` };
      const version = (Object.hasOwn(c.apiVersions, call.model) ? c.apiVersions[call.model] : c.apiVersions['*']) || defaultApiVersion;
      const b = keyBase(key);
      return {
        origin: b.origin,
        path: `${b.basePath}/openai/deployments/${encodeURIComponent(deployment)}/${endpoint}?api-version=${encodeURIComponent(version)}`,
        headers: { 'api-key': key.secret },
        format: 'openai',
      };
    },
  };
}
