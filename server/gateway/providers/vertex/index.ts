import type { PooledKey } from '../../../state/provider-keys/key-pool';
import { keyBase, UpstreamSetupError, type CallInfo, type Endpoint, type Prepared, type ProviderEndpoint, type ProviderKind } from '../types';
import type { VertexTokens } from './token';
import { claudeTarget, CLAUDE_SERVES } from './claude';

/**
 * `vertex` (cloud platform): a service-account JWT is exchanged at `{base_url}/token` for an
 * access token (see token.ts), then the upstream is called with `Authorization: Bearer <token>`.
 * By `config.publisher`:
 * - `google` (the default): the OpenAI-compatible endpoint
 *   `{Provider}/v1/projects/{project_id}/locations/{location}/endpoints/openapi/chat/completions`;
 *   only chat completions exist there. A model without a publisher prefix gets `google/`
 *   (Vertex names Gemini `google/gemini-…`).
 * - `anthropic`: Claude through Anthropic's Messages API at `:rawPredict` (see claude.ts).
 * The location is read from the Provider host (`us-central1-aiplatform.googleapis.com` →
 * `us-central1`, the bare `aiplatform.googleapis.com` → `global`), else `us-central1`.
 */
export const DEFAULT_VERTEX_LOCATION = 'us-central1';

export function vertexLocation(host: string): string {
  const m = /^([a-z]+-[a-z]+\d+)-aiplatform\./.exec(host);
  if (m) return m[1];
  if (host === 'aiplatform.googleapis.com') return 'global';
  return DEFAULT_VERTEX_LOCATION;
}

interface VertexTarget {
  origin: string;
  /** `{Provider}/v1/projects/{project}/locations/{location}` */
  location: string;
  tokenUrl: string;
  clientEmail: string;
  claude: boolean;
}

const targets = new WeakMap<PooledKey, VertexTarget | null>();

function targetOf(key: PooledKey): VertexTarget | null {
  let t = targets.get(key);
  if (t === undefined) {
    const c = key.config as Record<string, unknown>;
    const project = typeof c.project_id === 'string' ? c.project_id : '';
    const baseUrl = typeof c.base_url === 'string' ? c.base_url.replace(/\/+$/, '') : '';
    const clientEmail = typeof c.client_email === 'string' ? c.client_email : '';
    if (!project || !baseUrl || !clientEmail) t = null;
    else {
      const b = keyBase(key);
      t = {
        origin: b.origin,
        location: `${b.basePath}/v1/projects/${encodeURIComponent(project)}/locations/${encodeURIComponent(vertexLocation(b.host))}`,
        tokenUrl: `${baseUrl}/token`,
        clientEmail,
        claude: c.publisher === 'anthropic',
      };
    }
    targets.set(key, t);
  }
  return t;
}

const GOOGLE_SERVES: ReadonlySet<ProviderEndpoint> = new Set<ProviderEndpoint>(['chat']);
const OPENAI_COMPATIBLE = '/endpoints/openapi/chat/completions';
const servedBy = (key: PooledKey) => (key.config.publisher === 'anthropic' ? CLAUDE_SERVES : GOOGLE_SERVES);

export function createVertexKind(tokens: VertexTokens): ProviderKind {
  return {
    type: 'vertex',
    serves: servedBy,
    async prepare(key: PooledKey, call: CallInfo): Promise<Prepared> {
      if (!servedBy(key).has(call.endpoint)) return { skip: `a cloud-platform key has no ${call.endpoint} endpoint` };
      const t = targetOf(key);
      if (!t || !key.privateKey) throw new UpstreamSetupError('auth', 'the cloud-platform key lacks base_url, project_id, client_email or its private key');
      const token = await tokens.token({ keyId: key.id, clientEmail: t.clientEmail, tokenUrl: t.tokenUrl, privateKeyPem: key.privateKey });
      const authorization = `Bearer ${token}`;
      if (t.claude) return claudeTarget(t.origin, t.location, authorization, call);
      return {
        origin: t.origin,
        path: t.location + OPENAI_COMPATIBLE,
        headers: { authorization },
        model: call.model.includes('/') ? undefined : `google/${call.model}`,
        format: 'openai',
      };
    },
    // A revoked or expired access token is not a bad key: exchange a new one and try again.
    renewCredentials(key: PooledKey): boolean {
      tokens.forget(key.id);
      return true;
    },
  };
}
