import { z } from 'zod';
import { isoTime, MAX_ID, pageQuery } from '../common';

const modelMap = (what: string) =>
  z.record(z.string().min(1).max(200), z.string().min(1).max(200)).meta({ description: what });

export const StandardConfig = z.strictObject({
  provider_type: z.literal('standard'),
  responses: z.boolean().optional().meta({ description: 'false: the provider has chat completions but no Responses API, so /v1/responses calls are translated to chat completions; default true' }),
}).meta({ id: 'StandardProviderConfig', description: 'OpenAI-compatible upstream (on anthropic.com: Anthropic\'s API).' });

export const AnthropicConfig = z.strictObject({
  provider_type: z.literal('anthropic'),
}).meta({ id: 'AnthropicProviderConfig', description: 'Anthropic\'s native Messages API (x-api-key); OpenAI-format calls are translated to it.' });

export const CloudHostedConfig = z.strictObject({
  provider_type: z.literal('azure'),
  deployments: modelMap('Model name → deployment name').refine((m) => Object.keys(m).length > 0, 'at least one model→deployment entry is required'),
  api_versions: modelMap('Model name → api-version; a model without an entry uses the deployment default (AZURE_API_VERSION)').optional(),
}).meta({ id: 'CloudHostedProviderConfig', description: 'Cloud-hosted deployments (Azure OpenAI style).' });

const pem = z.string().max(16_384).regex(/-----BEGIN (RSA )?PRIVATE KEY-----[\s\S]+-----END (RSA )?PRIVATE KEY-----/, 'must be a PEM private key');

export const CloudPlatformConfig = z.strictObject({
  provider_type: z.literal('vertex'),
  base_url: z.url({ protocol: /^https?$/ }).max(2048),
  project_id: z.string().min(1).max(200),
  client_email: z.email().max(320),
  publisher: z.enum(['google', 'anthropic']).optional().meta({ description: 'Whose models the key serves: google (default) through the OpenAI-compatible chat endpoint, anthropic (Claude) through rawPredict with Anthropic\'s Messages API; OpenAI-format calls are translated to it' }),
  private_key: pem.meta({ description: 'Service-account private key (PEM). Write-only: never returned.' }),
}).meta({ id: 'CloudPlatformProviderConfig', description: 'Cloud platform (Vertex AI style) with a service account.' });

export const BedrockConfig = z.strictObject({
  provider_type: z.literal('bedrock'),
  region: z.string().regex(/^[a-z]{2}(-[a-z]+)+-\d+$/, 'must be an AWS region such as us-east-1').max(40).meta({ description: 'AWS region the requests are signed for (us-east-1)' }),
  access_key_id: z.string().regex(/^[A-Z0-9]{16,128}$/, 'must be an AWS access key ID').optional().meta({ description: 'With it, requests are signed with SigV4 and the SecretKey is the secret access key; without it, the SecretKey is a Bedrock API key (Bearer)' }),
  session_token: z.string().min(1).max(8192).optional().meta({ description: 'Temporary credentials\' session token. Write-only: never returned; left out on update to keep the stored one.' }),
  models: modelMap('Model the client names → Bedrock model ID or inference profile (us.anthropic.claude-…); a model without an entry is sent as named').optional(),
}).meta({ id: 'BedrockProviderConfig', description: 'AWS Bedrock runtime: Claude through InvokeModel with Anthropic\'s Messages API; OpenAI-format calls are translated to it.' });

export const GeminiConfig = z.strictObject({
  provider_type: z.literal('gemini'),
}).meta({ id: 'GeminiProviderConfig', description: 'Google\'s Gemini API (AI Studio key, sent as x-goog-api-key); Provider is its base, https://generativelanguage.googleapis.com. Gemini-format calls go as sent; OpenAI- and Anthropic-format calls are translated to it.' });

export const ProviderConfigInput = z.discriminatedUnion('provider_type', [StandardConfig, AnthropicConfig, CloudHostedConfig, CloudPlatformConfig, BedrockConfig, GeminiConfig]);
/** On update the private key may be left out to keep the stored one. */
export const ProviderConfigPatch = z.discriminatedUnion('provider_type', [
  StandardConfig,
  AnthropicConfig,
  CloudHostedConfig,
  CloudPlatformConfig.extend({ private_key: pem.optional() }),
  BedrockConfig,
  GeminiConfig,
]);

export const ProviderConfigView = z.discriminatedUnion('provider_type', [
  StandardConfig,
  AnthropicConfig,
  CloudHostedConfig,
  CloudPlatformConfig.omit({ private_key: true }).extend({ private_key_set: z.boolean() }).meta({ id: 'CloudPlatformProviderConfigView' }),
  BedrockConfig.omit({ session_token: true }).extend({ session_token_set: z.boolean() }).meta({ id: 'BedrockProviderConfigView' }),
  GeminiConfig,
]).meta({ id: 'ProviderConfig' });

const SecretKey = z.string().min(20, 'must be at least 20 characters').max(8192);
const Provider = z.url({ protocol: /^https?$/, error: 'must be a valid http(s) URL' }).max(2048);
const Level = z.int().min(0).max(1000);

export const ProviderKeyCreate = z.strictObject({
  Name: z.string().max(200).optional(),
  Level: Level.optional().meta({ description: 'Level (key pool) used for routing; default 1' }),
  Provider,
  SecretKey,
  Status: z.boolean().optional().meta({ description: 'Enabled; false when omitted' }),
  config: ProviderConfigInput.optional().meta({ description: 'Provider kind and its settings; standard when omitted' }),
}).meta({ id: 'ProviderKeyCreate' });

export const ProviderKeyPatch = z.strictObject({
  Name: z.string().max(200).optional(),
  Level: Level.optional(),
  Provider: Provider.optional(),
  SecretKey: SecretKey.optional(),
  Status: z.boolean().optional(),
  config: ProviderConfigPatch.optional(),
}).meta({ id: 'ProviderKeyUpdate' });

export const ProviderKey = z.object({
  ID: z.int(),
  Name: z.string(),
  Level: z.int(),
  Provider: z.string(),
  Status: z.boolean(),
  config: ProviderConfigView,
  SecretHint: z.string().meta({ description: 'Last 4 characters of the SecretKey; the key itself is never returned' }),
  Sleeping: z.boolean(),
  SleepUntil: isoTime.nullable(),
  DisabledReason: z.string().nullable().meta({ description: 'Why the gateway disabled the key (upstream 401/403), if it did' }),
  CreatedAt: isoTime,
  UpdatedAt: isoTime,
}).meta({ id: 'ProviderKey' });

export const ProviderKeyResult = z.object({
  Action: z.enum(['add', 'update', 'delete']),
  Key: ProviderKey,
  LevelMapper: z.string().nullable().meta({ description: 'LEVEL_MAPPER entry added automatically for a standard provider, e.g. `gpt-*=1`' }),
}).meta({ id: 'ProviderKeyResult' });

export const ProviderKeyListQuery = z.object({
  id: z.coerce.number().int().min(1).max(MAX_ID).optional(),
  level: z.coerce.number().int().min(0).max(1000).optional(),
  provider: z.string().max(2048).optional().meta({ description: 'Full provider URL or its host' }),
  ...pageQuery,
});

export const ProviderKeySelectorQuery = z.object({
  selector: z.string().min(1).max(2048).meta({ description: 'A key ID (`12`), a Level (`L2`) or a provider host (`api.openai.com`)' }),
  ...pageQuery,
});

export const ProviderKeyIdPath = z.object({
  id: z.string().regex(/^\d{1,15}$/, 'must be a numeric key ID'),
});

export type ProviderKey = z.infer<typeof ProviderKey>;
export type ProviderKeyCreate = z.infer<typeof ProviderKeyCreate>;
export type ProviderKeyPatch = z.infer<typeof ProviderKeyPatch>;
export type ProviderKeyResult = z.infer<typeof ProviderKeyResult>;
export type ProviderKeyListQuery = z.infer<typeof ProviderKeyListQuery>;
export type ProviderConfigInput = z.infer<typeof ProviderConfigInput>;
export type ProviderConfigPatch = z.infer<typeof ProviderConfigPatch>;
export type ProviderConfigView = z.infer<typeof ProviderConfigView>;
