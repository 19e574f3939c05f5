import type { PooledKey } from '../../../state/provider-keys/key-pool';
import { keyBase, UpstreamSetupError, type CallInfo, type Endpoint, type Prepared, type ProviderKind } from '../types';
import type { VertexTokens } from './token';

/**
 * `vertex` (cloud platform): a service-account JWT is exchanged at `{base_url}/token` for an
 * access token (see token.ts), then the OpenAI-compatible endpoint
 * `{Provider}/v1/projects/{project_id}/locations/{location}/endpoints/openapi/chat/completions`
 * is called with `Authorization: Bearer <token>`. Only chat completions exist there.
 * The location is read from the Provider host (`us-central1-aiplatform.googleapis.com` →
 * `us-central1`, the bare `aiplatform.googleapis.com` → `global`), else `us-central1`.
 * A model without a publisher prefix gets `google/` (Vertex names Gemini `google/gemini-…`).
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
  path: string;
  tokenUrl: string;
  clientEmail: string;
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
      const location = vertexLocation(b.host);
      t = {
        origin: b.origin,
        path: `${b.basePath}/v1/projects/${encodeURIComponent(project)}/locations/${encodeURIComponent(location)}/endpoints/openapi/chat/completions`,
        tokenUrl: `${baseUrl}/token`,
        clientEmail,
      };
    }
    targets.set(key, t);
  }
  return t;
}

const SERVES: ReadonlySet<Endpoint> = new Set<Endpoint>(['chat']);

export function createVertexKind(tokens: VertexTokens): ProviderKind {
  return {
    type: 'vertex',
    serves: () => SERVES,
    async prepare(key: PooledKey, call: CallInfo): Promise<Prepared> {
      if (call.endpoint !== 'chat') return { skip: `a cloud-platform key has no ${call.endpoint} endpoint` };
      const t = targetOf(key);
      if (!t || !key.privateKey) throw new UpstreamSetupError('auth', 'the cloud-platform key lacks base_url, project_id, client_email or its private key');
      const token = await tokens.token({ keyId: key.id, clientEmail: t.clientEmail, tokenUrl: t.tokenUrl, privateKeyPem: key.privateKey });
      return {
        origin: t.origin,
        path: t.path,
        headers: { authorization: `Bearer ${token}` },
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
