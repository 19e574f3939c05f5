/**
 * The key kinds of the agents' suite: the columns of docs/conformance.md, and the `<kind>` each test
 * title starts with (`it('<kind>: <scenario>')`). Kept apart from the harness so the matrix script
 * reads them without starting anything.
 */
import { KEY_KINDS, type KeyKind } from '../../server/testing/key-kinds';

export { KEY_KINDS, type KeyKind };

/** What each key kind is, as the Owner adds it (`config` of `POST /x-keys`). */
export const KIND_CONFIG: Record<KeyKind, string> = {
  standard: '`{"provider_type": "standard"}` (the default): OpenAI chat completions and Responses',
  'chat-only': '`{"provider_type": "standard", "responses": false}`: chat completions only',
  anthropic: '`{"provider_type": "anthropic"}`: Anthropic Messages',
  'vertex-claude': '`{"provider_type": "vertex", "publisher": "anthropic"}`: Claude on Vertex AI (rawPredict), service-account OAuth',
  azure: '`{"provider_type": "azure", "deployments": {…}}`: Azure OpenAI deployments (chat completions)',
  gemini: '`{"provider_type": "gemini"}`: Gemini API (generateContent), Google AI Studio key',
  bedrock: '`{"provider_type": "bedrock", "region": …, "access_key_id": …, "models": {…}}`: Claude on AWS Bedrock (InvokeModel), SigV4',
};
