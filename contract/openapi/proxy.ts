import type { OpenApiDocument, Operation, Response, Schema } from './types';
import { aliasAndKey, ANTHROPIC_ERROR_SCHEMA, API_KEY_HEADER_SCHEME, CALL_HEADERS, errorAnswer, header, passThrough, PROVIDER_ANSWER_SCHEMA, PROXY_SECURITY, PROXY_TAG, ref, REQUEST_ID_PARAMETER, retryAfter } from './proxy-common';
import { BATCH_FILE_OPERATIONS, batchFileBodies, batchFileOperation } from './batch-files';

export { ANTHROPIC_ERROR_SCHEMA, API_KEY_HEADER_SCHEME, CALL_HEADERS, CLIENT_REQUEST_ID_MAX, CLIENT_REQUEST_ID_PATTERN, PROVIDER_ANSWER_SCHEMA, PROXY_DESCRIPTION, PROXY_TAG } from './proxy-common';
export { BATCH_FILE_OPERATIONS } from './batch-files';

/**
 * The AI proxy's routes in the OpenAPI document. They are not tRPC procedures (the gateway
 * serves them on its own hot path), so the builder adds them by hand from this table. Bodies
 * are open objects: the gateway reads only `model`, `stream` and `stream_options` and passes
 * everything else to the provider unchanged; answers are the provider's own.
 */
interface ProxyRoute {
  path: string;
  alias: string;
  operationId: string;
  summary: string;
  /** Component name of the request body. */
  body: string;
  /** The provider's format: Anthropic's on /v1/messages, errors included. */
  anthropic: boolean;
  streams: boolean;
  /** Neither admitted nor billed (the token count). */
  free?: true;
  /** A multipart/form-data upload, streamed to the provider as it arrives (MAX_UPLOAD_BYTES). */
  upload?: true;
  /** The answer is binary audio, relayed as it comes. */
  audio?: true;
  /** What the call is billed by, when not its tokens at ChatPricing. */
  unit?: string;
}

export const PROXY_ROUTES: readonly ProxyRoute[] = [
  { path: '/v1/chat/completions', alias: '/chat/completions', operationId: 'proxy-chatCompletions', summary: 'Chat completion (OpenAI format)', body: 'ChatCompletionRequest', anthropic: false, streams: true },
  { path: '/v1/responses', alias: '/responses', operationId: 'proxy-responses', summary: 'Response (OpenAI Responses format)', body: 'ResponsesRequest', anthropic: false, streams: true },
  { path: '/v1/embeddings', alias: '/embeddings', operationId: 'proxy-embeddings', summary: 'Embeddings (OpenAI format)', body: 'EmbeddingsRequest', anthropic: false, streams: false },
  { path: '/v1/messages', alias: '/messages', operationId: 'proxy-messages', summary: 'Message (Anthropic Messages format)', body: 'MessagesRequest', anthropic: true, streams: true },
  { path: '/v1/messages/count_tokens', alias: '/messages/count_tokens', operationId: 'proxy-countTokens', summary: 'Count a message\'s input tokens (Anthropic format)', body: 'CountTokensRequest', anthropic: true, streams: false, free: true },
  { path: '/v1/completions', alias: '/completions', operationId: 'proxy-completions', summary: 'Legacy or fill-in-the-middle completion (OpenAI format)', body: 'CompletionRequest', anthropic: false, streams: true },
  { path: '/v1/moderations', alias: '/moderations', operationId: 'proxy-moderations', summary: 'Moderation (OpenAI format)', body: 'ModerationRequest', anthropic: false, streams: false, unit: 'per call at PRICING `CallPricing.<model>.Call`' },
  { path: '/v1/rerank', alias: '/rerank', operationId: 'proxy-rerank', summary: 'Rerank documents (the Cohere/Jina shape OpenAI-compatible providers expose)', body: 'RerankRequest', anthropic: false, streams: false, unit: 'per search unit (a query with up to 100 documents) at `RerankPricing.<model>.Call`, plus input tokens at `Input`' },
  { path: '/v1/images/generations', alias: '/images/generations', operationId: 'proxy-imageGenerations', summary: 'Image generation (OpenAI format)', body: 'ImageGenerationRequest', anthropic: false, streams: true, unit: 'per image by size and quality (`ImgPricing.<model>.Sizes`, else `Call`), or by the tokens gpt-image models report (ChatPricing `InputText`, `InputImage`, `OutputImage`)' },
  { path: '/v1/images/edits', alias: '/images/edits', operationId: 'proxy-imageEdits', summary: 'Image edit (OpenAI format, multipart)', body: 'ImageEditForm', anthropic: false, streams: true, upload: true, unit: 'as image generation' },
  { path: '/v1/images/variations', alias: '/images/variations', operationId: 'proxy-imageVariations', summary: 'Image variation (OpenAI format, multipart)', body: 'ImageVariationForm', anthropic: false, streams: false, upload: true, unit: 'as image generation' },
  { path: '/v1/audio/transcriptions', alias: '/audio/transcriptions', operationId: 'proxy-transcriptions', summary: 'Audio transcription (OpenAI format, multipart)', body: 'TranscriptionForm', anthropic: false, streams: true, upload: true, unit: 'per second of audio (`AudioPricing.<model>.InputAudio` per million audio tokens, a second counting 10), or by the tokens gpt-4o transcribers report (`Input`, `InputAudio`, `Output`)' },
  { path: '/v1/audio/translations', alias: '/audio/translations', operationId: 'proxy-translations', summary: 'Audio translation to English (OpenAI format, multipart)', body: 'TranslationForm', anthropic: false, streams: false, upload: true, unit: 'as transcriptions' },
  { path: '/v1/audio/speech', alias: '/audio/speech', operationId: 'proxy-speech', summary: 'Text to speech (OpenAI format)', body: 'SpeechRequest', anthropic: false, streams: false, audio: true, unit: 'per input character (`AudioPricing.<model>.Input` per million characters) plus output audio tokens at `OutputAudio` (reported with `stream_format: "sse"`, else 1.5 a character)' },
];

const model: Schema = {
  type: 'string', minLength: 1, maxLength: 200,
  description: 'The model asked for. The account\'s ModelMapper (then its ancestors\', then the Owner\'s MODEL_MAPPER) may map it; the mapped model is routed, checked against AllowModels and billed.',
};
const stream: Schema = {
  type: 'boolean',
  description: '`true`: the answer comes as server-sent events (`text/event-stream`), relayed as the provider sends them.',
};

const requestBodies: Record<string, Schema> = {
  ChatCompletionRequest: {
    type: 'object', required: ['model'], additionalProperties: true,
    description: 'An OpenAI chat completion request. Fields not listed here are passed to the provider unchanged.',
    properties: {
      model,
      messages: { type: 'array', items: { type: 'object', additionalProperties: true }, ...passThrough('The conversation') },
      stream,
      stream_options: {
        type: 'object', additionalProperties: true,
        description: 'With `stream`: when `include_usage` is not `true`, the gateway asks the provider for the usage chunk itself (to bill the call) and keeps that chunk from the client.',
        properties: { include_usage: { type: 'boolean' } },
      },
    },
    example: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello' }] },
  },
  ResponsesRequest: {
    type: 'object', required: ['model'], additionalProperties: true,
    description: 'An OpenAI Responses API request. Fields not listed here are passed to the provider unchanged.',
    properties: { model, input: passThrough('Text or input items'), stream },
    example: { model: 'gpt-4o-mini', input: 'Say hello' },
  },
  EmbeddingsRequest: {
    type: 'object', required: ['model'], additionalProperties: true,
    description: 'An OpenAI embeddings request (never streamed). Fields not listed here are passed to the provider unchanged.',
    properties: { model, input: passThrough('Text or texts to embed') },
    example: { model: 'text-embedding-3-small', input: 'hello' },
  },
  MessagesRequest: {
    type: 'object', required: ['model'], additionalProperties: true,
    description: 'An Anthropic Messages request (`max_tokens` is required by the provider). Fields not listed here are passed to the provider unchanged.',
    properties: {
      model,
      max_tokens: { type: 'integer', ...passThrough('Most output tokens; required by Anthropic') },
      messages: { type: 'array', items: { type: 'object', additionalProperties: true }, ...passThrough('The conversation') },
      stream,
    },
    example: { model: 'claude-haiku-4-5', max_tokens: 256, messages: [{ role: 'user', content: 'Say hello' }] },
  },
  CompletionRequest: {
    type: 'object', required: ['model'], additionalProperties: true,
    description: 'A legacy (or fill-in-the-middle, with `suffix`) completion request. Fields not listed here are passed to the provider unchanged.',
    properties: { model, prompt: passThrough('The prompt'), suffix: passThrough('Text after the completion (fill-in-the-middle)'), stream, stream_options: { type: 'object', additionalProperties: true, description: 'As on chat completions: the gateway asks for the usage chunk itself and keeps it from the client.' } },
    example: { model: 'gpt-3.5-turbo-instruct', prompt: 'def add(a, b):', max_tokens: 32 },
  },
  ModerationRequest: {
    type: 'object', required: ['model'], additionalProperties: true,
    description: 'An OpenAI moderation request (`model` is required here: it decides routing and price).',
    properties: { model, input: passThrough('Text, texts or multimodal inputs') },
    example: { model: 'omni-moderation-latest', input: 'hello' },
  },
  RerankRequest: {
    type: 'object', required: ['model'], additionalProperties: true,
    description: 'A rerank request in the Cohere/Jina shape.',
    properties: { model, query: passThrough('The query'), documents: { type: 'array', items: {}, ...passThrough('Texts (or objects with `text`) to rank') }, top_n: { type: 'integer', ...passThrough('How many results') } },
    example: { model: 'rerank-v3.5', query: 'green tea', documents: ['black coffee', 'green tea leaves'], top_n: 1 },
  },
  ImageGenerationRequest: {
    type: 'object', required: ['model'], additionalProperties: true,
    description: 'An OpenAI image generation request. Admission reserves `n` images at the dearest price `size` and `quality` allow (`auto` or absent: the dearest of the model).',
    properties: { model, prompt: passThrough('The description'), n: { type: 'integer', minimum: 1, maximum: 10 }, size: { type: 'string', example: '1024x1024' }, quality: { type: 'string', example: 'standard' }, stream },
    example: { model: 'dall-e-3', prompt: 'a lighthouse at dusk', size: '1024x1024', quality: 'standard' },
  },
  ImageEditForm: {
    type: 'object', required: ['model', 'image'], additionalProperties: true,
    description: 'A multipart image edit: `image` (or several `image[]`), `mask`, `prompt`, `model`, `n`, `size`, `quality`. Fields after the first file that follows `model` are unknown at admission (the defaults are reserved) and billed as sent.',
    properties: { model, image: { type: 'string', format: 'binary' }, mask: { type: 'string', format: 'binary' }, prompt: { type: 'string' }, n: { type: 'integer' }, size: { type: 'string' }, quality: { type: 'string' }, stream: { type: 'string', enum: ['true', 'false'] } },
  },
  ImageVariationForm: {
    type: 'object', required: ['model', 'image'], additionalProperties: true,
    description: 'A multipart image variation: `image`, `model`, `n`, `size`.',
    properties: { model, image: { type: 'string', format: 'binary' }, n: { type: 'integer' }, size: { type: 'string' } },
  },
  TranscriptionForm: {
    type: 'object', required: ['model', 'file'], additionalProperties: true,
    description: 'A multipart transcription: `file` (the audio), `model` (before or after the file), `response_format` (`json`, `text`, `srt`, `vtt`, `verbose_json`), `stream` (`true` for models that stream). Admission reserves a second of audio per 2,000 bytes of upload.',
    properties: { model, file: { type: 'string', format: 'binary' }, response_format: { type: 'string' }, stream: { type: 'string', enum: ['true', 'false'] } },
  },
  TranslationForm: {
    type: 'object', required: ['model', 'file'], additionalProperties: true,
    description: 'A multipart translation into English: `file`, `model`, `response_format`.',
    properties: { model, file: { type: 'string', format: 'binary' }, response_format: { type: 'string' } },
  },
  SpeechRequest: {
    type: 'object', required: ['model'], additionalProperties: true,
    description: 'An OpenAI text-to-speech request. The audio is relayed as the provider sends it; with `stream_format: "sse"` it comes as `speech.audio.delta` events.',
    properties: { model, input: passThrough('The text'), voice: passThrough('The voice'), response_format: passThrough('Audio format'), stream_format: { type: 'string', enum: ['audio', 'sse'] } },
    example: { model: 'tts-1', voice: 'alloy', input: 'Hello there' },
  },
  CountTokensRequest: {
    type: 'object', required: ['model'], additionalProperties: true,
    description: 'An Anthropic token-count request (a Messages request without `max_tokens`). An Anthropic key counts it; for any other key the gateway answers `{"input_tokens"}` itself with the input estimate admission reserves for: an upper bound, not a tokenizer\'s count.',
    properties: { model, messages: { type: 'array', items: { type: 'object', additionalProperties: true }, ...passThrough('The conversation') } },
    example: { model: 'claude-haiku-4-5', messages: [{ role: 'user', content: 'Say hello' }] },
  },
};

const answerSchemas: Record<string, Schema> = {
  [PROVIDER_ANSWER_SCHEMA]: {
    type: 'object', additionalProperties: true,
    description: 'The provider\'s answer, passed through: OpenAI\'s format on the OpenAI routes, Anthropic\'s on /v1/messages, with `usage` (the tokens the call is billed for). The `model` field is the one the provider answered with.',
  },
  [ANTHROPIC_ERROR_SCHEMA]: {
    type: 'object', required: ['type', 'error'],
    description: 'Body of a gateway error on /v1/messages: Anthropic\'s shape (so its SDK raises its own error classes), plus the gateway\'s stable `code`.',
    properties: {
      type: { type: 'string', enum: ['error'] },
      error: {
        type: 'object', required: ['type', 'message', 'code'],
        properties: {
          type: { type: 'string', description: 'Anthropic\'s error type: `invalid_request_error`, `request_too_large`, `authentication_error`, `billing_error`, `permission_error`, `rate_limit_error`, `overloaded_error`, `timeout_error`, `api_error`.' },
          message: { type: 'string' },
          code: { type: 'string', description: 'The same stable code the OpenAI routes give, e.g. `insufficient_balance`.' },
          request_id: { type: 'string', description: 'The request ID of the call (also in `x-request-id`), the key to its log lines.' },
        },
      },
    },
    example: { type: 'error', error: { type: 'billing_error', message: 'Insufficient balance: 1.5000 is below the minimum of 2', code: 'insufficient_balance' } },
  },
};


/** Error statuses the proxy answers itself; `codes` are the envelope's `code` values. */
const ERRORS: [status: string, description: string, headers?: Record<string, Schema>][] = [
  ['400', 'Malformed JSON (`invalid_json`), a body that is not an object (`invalid_request`), no usable `model` (`invalid_model`), or no provider key able to serve this route for the model (`unsupported_by_provider`). A provider\'s own 4xx answer (other than 401, 403, 408, 429) is passed through as it sent it.'],
  ['401', 'No key (`missing_api_key`), an unknown key (`invalid_api_key`) or a disabled account (`account_disabled`).'],
  ['402', 'The account\'s balance is below USER_MIN_BALANCE (`insufficient_balance`). Root and Owners are never refused for balance.'],
  ['403', 'Suspended (`account_suspended`), or refused by the ACL: AllowIPs (`ip_not_allowed`), Resources (`resource_not_allowed`), AllowModels (`model_not_allowed`), AllowLevels (`level_not_allowed`).'],
  ['413', 'Body larger than MAX_BODY_BYTES, or an upload larger than MAX_UPLOAD_BYTES (`body_too_large`; a declared length over it is answered without reading the body).'],
  ['415', 'Body not sent as `application/json`, or on the upload routes as `multipart/form-data` (`unsupported_media_type`).'],
  ['429', 'An account or model rate limit (`rate_limit_exceeded`; the `X-RateLimit-*` headers name it), or every provider key rate limited upstream (`upstream_rate_limited`).', {
    'Retry-After': retryAfter('always sent'),
    'X-RateLimit-Limit': header('The limit that refused the call (requests or tokens per window); account and model limits only.'),
    'X-RateLimit-Remaining': header('What is left of it in the current window.'),
    'X-RateLimit-Reset': header('Seconds until the window frees room.'),
    'X-RateLimit-Scope': header('Which limit: `RPM`, `RPH`, `RPD`, `TPM`, `TPH`, `TPD`, or `<model> rpm` / `<model> tpm` from ModelLimits.', 'string'),
  }],
  ['502', 'Every provider key tried failed (`upstream_error`): connection errors, 5xx, keys refused with 401/403 (those keys are disabled).'],
  ['503', 'No enabled provider key at the Level (`no_provider_key`), every key cooling down after upstream 429s (`no_available_key`), the gateway shutting down (`shutting_down`) or its database unreachable (`database_unavailable`).', {
    'Retry-After': retryAfter('with `no_available_key`, `shutting_down` and `database_unavailable`'),
  }],
  ['504', 'The provider did not send response headers within UPSTREAM_TIMEOUT_MS on the last key tried (`upstream_timeout`).'],
];

function operation(r: ProxyRoute): Operation {
  const ok: Response = {
    description: r.streams
      ? 'The provider\'s answer: JSON, or with `"stream": true` server-sent events. A stream the provider cuts or stalls ends with an `event: error` carrying `stream_interrupted`, then the connection closes without the final chunk.'
      : 'The provider\'s answer.',
    content: {
      ...(r.audio ? { 'audio/mpeg': { schema: { type: 'string', format: 'binary', description: 'The audio (or the asked `response_format`\'s type), relayed as it comes' } } } : {}),
      'application/json': { schema: ref(PROVIDER_ANSWER_SCHEMA) },
      ...(r.streams || r.audio ? { 'text/event-stream': { schema: { type: 'string', description: 'Server-sent events in the provider\'s format' } } } : {}),
    },
  };
  const responses: Record<string, Response> = { '200': { ...ok, headers: { ...CALL_HEADERS } } };
  for (const [status, description, headers] of ERRORS) {
    responses[status] = errorAnswer(description, r.anthropic, headers);
  }
  return {
    tags: [PROXY_TAG.name],
    summary: r.summary,
    description: [
      aliasAndKey(r.alias),
      r.anthropic
        ? 'Sent to the provider with its key\'s `x-api-key` and the client\'s `anthropic-version` (default `2023-06-01`) and `anthropic-beta`. Errors use Anthropic\'s shape.'
        : 'Sent to the provider with its key; the client\'s `openai-beta` header is passed on. Errors use the `Error` envelope.',
      r.free ? 'Free: nothing is reserved, recorded or billed.' : 'Usage and credit cost are recorded for the calling account (see `/dashboard/bill`).',
      ...(r.unit ? [`Billed ${r.unit}.`] : []),
      ...(r.upload ? ['The upload is streamed to the provider as it arrives, never held whole; the `model` field may come before or after the file.'] : []),
    ].join('\n\n'),
    operationId: r.operationId,
    security: PROXY_SECURITY,
    parameters: [{ ...REQUEST_ID_PARAMETER }],
    requestBody: { required: true, content: { [r.upload ? 'multipart/form-data' : 'application/json']: { schema: ref(r.body) } } },
    responses,
  };
}

/** A stored response's reads and its deletion: free calls that go to the key holding the response. */
interface StoredResponseOperation {
  method: 'get' | 'delete';
  path: string;
  alias: string;
  operationId: string;
  summary: string;
  description: string;
  /** Query parameters, as OpenAI takes them. */
  query?: Schema[];
}

const WHERE_STORED = 'A response a provider key made is read from that key alone (on whichever instance it was made); one the gateway answered through translation (`resp_gw_…`) from the gateway\'s own store. '
  + 'Only the account that created the response may read or delete it: for any other, and for an unknown ID, the answer is 404. Free: nothing is reserved, recorded or billed.';

export const STORED_RESPONSE_OPERATIONS: readonly StoredResponseOperation[] = [
  { method: 'get', path: '/v1/responses/{id}', alias: '/responses/{id}', operationId: 'proxy-retrieveResponse', summary: 'A stored response (OpenAI Responses format)', description: 'The Response object as the client got it.' },
  {
    method: 'get', path: '/v1/responses/{id}/input_items', alias: '/responses/{id}/input_items', operationId: 'proxy-responseInputItems', summary: 'A stored response\'s input items (OpenAI Responses format)',
    description: 'The items the response was made from, in OpenAI\'s list shape (`object: "list"`, `data`, `first_id`, `last_id`, `has_more`).',
    query: [
      { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } },
      { name: 'order', in: 'query', required: false, schema: { type: 'string', enum: ['asc', 'desc'], default: 'desc' } },
      { name: 'after', in: 'query', required: false, schema: { type: 'string' }, description: 'An item ID: the page starts after it.' },
    ],
  },
  { method: 'delete', path: '/v1/responses/{id}', alias: '/responses/{id}', operationId: 'proxy-deleteResponse', summary: 'Delete a stored response (OpenAI Responses format)', description: 'Answers `{"id", "object": "response.deleted", "deleted": true}`; a gateway-kept response can then be neither read nor continued.' },
];

function storedResponseOperation(r: StoredResponseOperation): Operation {
  const error = (description: string) => errorAnswer(description, false);
  return {
    tags: [PROXY_TAG.name],
    summary: r.summary,
    description: [aliasAndKey(r.alias), r.description, WHERE_STORED].join('\n\n'),
    operationId: r.operationId,
    security: PROXY_SECURITY,
    parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' }, description: 'The response\'s ID.' }, ...(r.query ?? []), { ...REQUEST_ID_PARAMETER }],
    responses: {
      '200': { description: 'The provider\'s answer, or the gateway\'s for a response it keeps.', headers: { ...CALL_HEADERS }, content: { 'application/json': { schema: ref(PROVIDER_ANSWER_SCHEMA) } } },
      '400': error('A query parameter out of range (`invalid_value`), or `stream` asked of a response the gateway keeps (`unsupported_parameter`).'),
      '401': error('No key (`missing_api_key`), an unknown key (`invalid_api_key`) or a disabled account (`account_disabled`).'),
      '403': error('Suspended (`account_suspended`), or refused by AllowIPs (`ip_not_allowed`) or Resources (`resource_not_allowed`).'),
      '404': error('No response with this ID for this account (`not_found`), or the key that made it is no longer enabled.'),
      '502': error('The key holding the response could not be reached or failed (`upstream_error`).'),
      '503': error('The gateway\'s store cannot be read now (`stored_response_unavailable`).'),
      '504': error('The key holding the response did not answer in time (`upstream_timeout`).'),
    },
  };
}

/** Every proxy-only component: the generator input leaves them out with the routes. */
export const PROXY_SCHEMAS: readonly string[] = [...Object.keys(requestBodies), ...Object.keys(batchFileBodies), ...Object.keys(answerSchemas)].sort();

/** Adds the proxy's paths, their schemas, the `x-api-key` scheme and the AI proxy tag. */
export function addProxyRoutes(doc: OpenApiDocument): void {
  for (const r of PROXY_ROUTES) {
    if (doc.paths[r.path]) throw new Error(`OpenAPI: ${r.path} is both a contract route and a proxy route`);
    doc.paths[r.path] = { post: operation(r) };
  }
  for (const r of STORED_RESPONSE_OPERATIONS) {
    if (doc.paths[r.path]?.[r.method]) throw new Error(`OpenAPI: ${r.method} ${r.path} is both a contract route and a proxy route`);
    doc.paths[r.path] = { ...doc.paths[r.path], [r.method]: storedResponseOperation(r) };
  }
  for (const r of BATCH_FILE_OPERATIONS) {
    if (doc.paths[r.path]?.[r.method]) throw new Error(`OpenAPI: ${r.method} ${r.path} is both a contract route and a proxy route`);
    doc.paths[r.path] = { ...doc.paths[r.path], [r.method]: batchFileOperation(r) };
  }
  doc.components ??= {};
  const schemas = (doc.components.schemas ??= {});
  for (const [name, schema] of Object.entries({ ...requestBodies, ...batchFileBodies, ...answerSchemas })) {
    if (schemas[name]) throw new Error(`OpenAPI: schema ${name} is both a contract schema and a proxy schema`);
    schemas[name] = schema;
  }
  doc.components.securitySchemes = {
    ...doc.components.securitySchemes,
    [API_KEY_HEADER_SCHEME]: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'An account API key, as Anthropic clients send it (AI proxy routes only)' },
  };
}
