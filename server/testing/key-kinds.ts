import { createHash, generateKeyPairSync } from 'node:crypto';
import type { MockUpstream } from './mock-upstream';

/**
 * The provider key kinds every client format is proven on (the fuzz suites, the agents' suite and
 * its conformance matrix), and how a key of each is added against the mock upstream.
 */
export const KEY_KINDS = ['standard', 'chat-only', 'anthropic', 'vertex-claude', 'azure', 'gemini', 'bedrock'] as const;
export type KeyKind = (typeof KEY_KINDS)[number];

export interface KindKey {
  /** The key's `config` (undefined: the default, `standard`). */
  config: Record<string, unknown> | undefined;
  /** The Provider URL, where the kind needs one of its own form. */
  provider?: string;
  /**
   * What the mock knows this key's calls by, for `mock.behave`: the SecretKey, or for Vertex the
   * service account's email (a behaviour under it applies to every token issued to it).
   */
  credential: string;
  /** Vertex only: the key's project, which its recorded calls carry. */
  project?: string;
}

/**
 * What a `bedrock` key's `models` maps the suites' Claude models to: cross-region inference
 * profiles, as an Owner configures them (Bedrock knows no `claude-sonnet-4-5`, and an ID's `:0`
 * cannot stand in a Gemini-format path).
 */
export const BEDROCK_MODELS: Readonly<Record<string, string>> = {
  'claude-sonnet-4-5': 'us.anthropic.claude-sonnet-4-5-20250929-v1:0',
  'claude-haiku-4-5': 'us.anthropic.claude-haiku-4-5-20251001-v1:0',
};

/** A Bedrock access key ID (20 characters, `AKIA` and upper-case letters and digits) of its own for `label`. */
function accessKeyIdOf(label: string): string {
  return `AKIA${createHash('sha256').update(label).digest('hex').toUpperCase().slice(0, 16)}`;
}

/**
 * A key of `kind` against `mock`, with SecretKey `secret`; `label` names what it creates there (a
 * Vertex service account the mock trusts, in a project of its own; an Azure deployment).
 */
export function kindKey(kind: KeyKind, mock: MockUpstream, secret: string, label: string): KindKey {
  switch (kind) {
    case 'standard': return { config: undefined, credential: secret };
    case 'chat-only': return { config: { provider_type: 'standard', responses: false }, credential: secret };
    case 'anthropic': return { config: { provider_type: 'anthropic' }, credential: secret };
    case 'gemini': return { config: { provider_type: 'gemini' }, credential: secret };
    case 'bedrock': {
      // SigV4 with an access key the mock trusts, the SecretKey being its secret access key.
      const accessKeyId = accessKeyIdOf(`${label}:${secret}`);
      mock.trustAwsKey(accessKeyId, secret);
      return { config: { provider_type: 'bedrock', region: 'us-east-1', access_key_id: accessKeyId, models: BEDROCK_MODELS }, credential: secret };
    }
    case 'azure': return { config: { provider_type: 'azure', deployments: { '*': `dep-${label}` } }, provider: `${mock.url}/`, credential: secret };
    case 'vertex-claude': {
      const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
      const project = `proj-${label}`;
      const email = `${label}@${project}.iam.gserviceaccount.com`;
      mock.trustServiceAccount(email, publicKey.export({ type: 'spki', format: 'pem' }) as string);
      return {
        config: { provider_type: 'vertex', publisher: 'anthropic', base_url: mock.url, project_id: project, client_email: email, private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }) },
        credential: email,
        project,
      };
    }
  }
}
