import { ERROR_SCHEMA, SECURITY_SCHEME } from './responses';
import type { Response, Schema } from './types';

/** What every AI proxy operation of the OpenAPI document shares: its tag, schemes, schema names and headers. */

export const PROXY_TAG = {
  name: 'AI proxy',
  description: 'AI calls in the OpenAI and Anthropic formats, routed to the Owner\'s provider keys, billed to the calling account. '
    + 'Call them with the `openai` or `@anthropic-ai/sdk` SDKs (`baseURL` `http://<host>:<port>/v1`); each also answers without the `/v1` prefix. '
    + 'Realtime sessions are a WebSocket at `GET /v1/realtime?model=<model>` (key in `Authorization` or the `openai-insecure-api-key.<key>` subprotocol), billed per response; `/v1/realtime/client_secrets` is refused. '
    + 'The model list is `GET /v1/models` (dashboard). Details: docs/proxy.md.',
} as const;

/** The document description's line about the proxy (the generated clients leave it out with the routes). */
export const PROXY_DESCRIPTION = '* **AI proxy:** the operations tagged `AI proxy` are the gateway\'s AI routes: they also take the key as `x-api-key`, and `/v1/messages` answers errors in Anthropic\'s shape (`AnthropicError`).';

/** Accepted as an alternative to the Bearer scheme on the proxy routes, as Anthropic's SDK sends it. */
export const API_KEY_HEADER_SCHEME = 'apiKeyHeader';

export const ANTHROPIC_ERROR_SCHEMA = 'AnthropicError';
export const PROVIDER_ANSWER_SCHEMA = 'ProviderAnswer';

export const header = (description: string, type: 'integer' | 'string' = 'integer'): Schema => ({ description, schema: { type } });
export const retryAfter = (when: string) => header(`Seconds to wait before retrying (${when}).`);

export const passThrough = (what: string): Schema => ({ description: `${what}; passed to the provider unchanged (the gateway does not read it).` });

export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** The pattern and length of a client request ID the gateway takes (server/gateway/request-id.ts). */
export const CLIENT_REQUEST_ID_PATTERN = '^[A-Za-z0-9\\-_.:@+=]+$';
export const CLIENT_REQUEST_ID_MAX = 128;

/** The call's identity and the gateway's own time: on every answer of a proxy route, errors included. */
export const CALL_HEADERS: Record<string, Schema> = {
  'X-Request-Id': header('The call\'s request ID: the client\'s `X-Request-Id` when it sent a usable one, else one the gateway generated. It names the call\'s usage record, access log line and trace, and is the `request_id` of an error body.', 'string'),
  'Server-Timing': header('The gateway\'s own time on the call, without the provider\'s: `gateway;dur=<ms>` (milliseconds, two decimals). On a streamed answer it covers the time until the head was sent.', 'string'),
};

export const REQUEST_ID_PARAMETER: Schema = {
  name: 'X-Request-Id',
  in: 'header',
  required: false,
  description: 'The client\'s own ID for the call, echoed in the answer\'s `X-Request-Id` and used in the gateway\'s logs and usage records. '
    + `Taken when it is 1 to ${CLIENT_REQUEST_ID_MAX} letters, digits or \`-_.:@+=\`; any other value is not refused, the gateway then generates an ID and answers with that one.`,
  schema: { type: 'string', minLength: 1, maxLength: CLIENT_REQUEST_ID_MAX, pattern: CLIENT_REQUEST_ID_PATTERN },
  example: 'checkout-7f3a2b',
};

/** Every proxy operation's first description line: its alias and where the key goes. */
export const aliasAndKey = (alias: string) => `Also answered at \`${alias}\`. The account key goes in \`Authorization: Bearer <key>\` or \`x-api-key\`.`;

/** The account key as Bearer or as `x-api-key`. */
export const PROXY_SECURITY: Record<string, string[]>[] = [{ [SECURITY_SCHEME]: [] }, { [API_KEY_HEADER_SCHEME]: [] }];

/** An error answer of a proxy operation: in Anthropic's shape on its routes, else the Error envelope. */
export function errorAnswer(description: string, anthropic: boolean, headers: Record<string, Schema> = {}): Response {
  return { description, headers: { ...CALL_HEADERS, ...headers }, content: { 'application/json': { schema: ref(anthropic ? ANTHROPIC_ERROR_SCHEMA : ERROR_SCHEMA) } } };
}
