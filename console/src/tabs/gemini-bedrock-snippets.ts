/**
 * Gemini's own API and AWS Bedrock as the Examples tab shows them and the README's step 8 has
 * them (console/agent-snippets.test.ts holds the two equal): a call with Google's `@google/genai`
 * SDK, and the Owner's admin call that adds a `gemini` or a `bedrock` provider key.
 */

/**
 * `@google/genai` on this gateway: the gateway is its `httpOptions.baseUrl` (the SDK calls
 * `{baseUrl}/v1beta/models/{model}:generateContent` with the key as `x-goog-api-key`). `key`
 * is a JavaScript expression for the account key (`process.env.SWITCHYARD_API_KEY`).
 */
export function genaiSnippet(base: string, key: string, model: string): string {
  const m = /^[\w.:@/-]+$/.test(model) ? `'${model}'` : JSON.stringify(model);
  return `import { GoogleGenAI } from '@google/genai';

const ai = new GoogleGenAI({ apiKey: ${key}, httpOptions: { baseUrl: '${base}' } });

const reply = await ai.models.generateContent({ model: ${m}, contents: 'Say hello' });
console.log(reply.text, reply.usageMetadata);`;
}

export type KeyKind = 'gemini' | 'bedrock';
export const KEY_KINDS: { id: KeyKind; label: string }[] = [{ id: 'gemini', label: 'Gemini API' }, { id: 'bedrock', label: 'AWS Bedrock' }];

/**
 * The body of `POST /x-keys` for each kind, with placeholders for the secrets (the Bedrock
 * access key ID is AWS's documented example, shaped as the API requires one).
 */
export const KEY_BODIES: Record<KeyKind, Record<string, unknown>> = {
  gemini: {
    Name: 'gemini-1', Level: 1, Provider: 'https://generativelanguage.googleapis.com',
    SecretKey: '<your AI Studio API key>', Status: true, config: { provider_type: 'gemini' },
  },
  bedrock: {
    Name: 'bedrock-1', Level: 1, Provider: 'https://bedrock-runtime.us-east-1.amazonaws.com',
    SecretKey: '<your AWS secret access key>', Status: true,
    config: {
      provider_type: 'bedrock', region: 'us-east-1', access_key_id: 'AKIAIOSFODNN7EXAMPLE',
      models: { 'claude-sonnet-4-5': 'us.anthropic.claude-sonnet-4-5-20250929-v1:0' },
    },
  },
};

/** The Owner adds a provider key of `kind`: curl on the admin API. `owner` is a shell expression for the Owner's key. */
export function providerKeySnippet(kind: KeyKind, base: string, owner: string): string {
  const { config, ...key } = KEY_BODIES[kind];
  const head = JSON.stringify(key).slice(0, -1);
  return `curl -s -X POST ${base}/x-keys -H "Authorization: Bearer ${owner}" \\
  -H 'content-type: application/json' \\
  -d '${head},
       "config":${JSON.stringify(config)}}'`;
}
