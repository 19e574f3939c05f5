import type { UpstreamClient } from '../../adapters/upstream-http/client';
import type { PooledKey } from '../../state/provider-keys/key-pool';
import type { ProviderKind } from './types';
import { standardKind } from './standard/index';
import { createAzureKind } from './azure/index';
import { createVertexKind } from './vertex/index';
import { VertexTokens } from './vertex/token';
import { anthropicKind } from './anthropic/index';
import { bedrockKind } from './bedrock/index';
import { geminiKind } from './gemini/index';

export interface ProviderKinds {
  of(key: PooledKey): ProviderKind;
  vertexTokens: VertexTokens;
}

/** The provider kinds by `config.provider_type`; an unknown or missing type is `standard`. */
export function createProviderKinds(opts: { client: UpstreamClient; azureApiVersion: string; tokenTimeoutMs: number }): ProviderKinds {
  const vertexTokens = new VertexTokens(opts.client, opts.tokenTimeoutMs);
  const kinds: Record<string, ProviderKind> = {
    standard: standardKind,
    azure: createAzureKind(opts.azureApiVersion),
    vertex: createVertexKind(vertexTokens),
    anthropic: anthropicKind,
    bedrock: bedrockKind,
    gemini: geminiKind,
  };
  return {
    of: (key) => kinds[key.config.provider_type as string] ?? standardKind,
    vertexTokens,
  };
}
