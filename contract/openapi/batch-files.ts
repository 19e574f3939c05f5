import type { Operation, Response, Schema } from './types';
import { aliasAndKey, CALL_HEADERS, errorAnswer, passThrough, PROVIDER_ANSWER_SCHEMA, PROXY_SECURITY, PROXY_TAG, ref, REQUEST_ID_PARAMETER } from './proxy-common';

/** The Files API and both batch APIs: each route relayed to the provider key holding the file or batch. */
interface BatchFileOperation {
  method: 'get' | 'post' | 'delete';
  path: string;
  alias: string;
  operationId: string;
  summary: string;
  description: string;
  /** Anthropic's Message Batches: Anthropic's headers and error shape. */
  anthropic: boolean;
  /** Component name of the request body (JSON, or a multipart form with `upload`). */
  body?: string;
  upload?: true;
  /** The answer's media type when it is not JSON (a file's bytes, JSONL results), streamed as it comes. */
  raw?: string;
  /** Refusals of this operation beyond those every one of them answers. */
  errors?: Record<string, string>;
  query?: Schema[];
}

const pageQuery = (max: number, fallback: number): Schema[] => [
  { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: max, default: fallback } },
  { name: 'after', in: 'query', required: false, schema: { type: 'string' }, description: 'An ID: the page starts after it.' },
];

const WHO_OWNS = 'A file, a batch and its output belong to the account that created them: any other account (sibling, parent or another tenant) gets the same 404 as for an ID that does not exist, and lists show only its own. Free: nothing is reserved, recorded or billed.';
const BATCH_MONEY = 'The batch\'s worst case (every line\'s input bound plus its `max_tokens`, else the model\'s output limit) is reserved at the batch price (the catalogue\'s, else 50 % of the standard price); the gateway\'s poller finds the batch\'s end every BATCH_POLL_MS, bills it once from the lines\' usage (a cancelled or expired batch its completed lines, a failed one nothing) and releases the rest. No translation across formats: the key must run this provider\'s batches natively.';

export const BATCH_FILE_OPERATIONS: readonly BatchFileOperation[] = [
  {
    method: 'post', path: '/v1/files', alias: '/files', operationId: 'proxy-uploadFile', summary: 'Upload a file (OpenAI Files API, multipart)', anthropic: false, body: 'FileUploadForm', upload: true,
    description: 'Streamed to the provider as it arrives, never held whole, up to MAX_FILE_BYTES (default 200 MB). A `batch` file names no model: it is routed as a call to the one model its JSONL lines name and stays on the provider key that received it, where its batch then runs. '
      + 'Free: the upload is admitted without a reservation and not billed.',
    errors: { '400': 'A `batch` file whose lines are not JSON, name no model or more than one model or endpoint, or call an endpoint batches do not run (`invalid_file`); no `file` or `purpose` (`invalid_request`).', '413': 'A file larger than MAX_FILE_BYTES (`body_too_large`).', '503': 'No provider key of the account\'s Level keeps files (`no_provider_key`), or the gateway\'s database cannot be read now (`database_unavailable`).' },
  },
  { method: 'get', path: '/v1/files', alias: '/files', operationId: 'proxy-listFiles', summary: 'List files (OpenAI Files API)', anthropic: false, description: 'The account\'s own files, in OpenAI\'s list shape (`object: "list"`, `data`, `first_id`, `last_id`, `has_more`), paged as OpenAI pages.', query: [...pageQuery(10_000, 10_000), { name: 'order', in: 'query', required: false, schema: { type: 'string', enum: ['asc', 'desc'], default: 'desc' } }, { name: 'purpose', in: 'query', required: false, schema: { type: 'string' } }] },
  { method: 'get', path: '/v1/files/{id}', alias: '/files/{id}', operationId: 'proxy-retrieveFile', summary: 'A file (OpenAI Files API)', anthropic: false, description: 'The File object, read from the provider key holding the file.' },
  { method: 'get', path: '/v1/files/{id}/content', alias: '/files/{id}/content', operationId: 'proxy-fileContent', summary: 'A file\'s content (OpenAI Files API)', anthropic: false, raw: 'application/octet-stream', description: 'The file\'s bytes (a batch\'s output or error file included), streamed back from the key holding it, never held whole.' },
  { method: 'delete', path: '/v1/files/{id}', alias: '/files/{id}', operationId: 'proxy-deleteFile', summary: 'Delete a file (OpenAI Files API)', anthropic: false, description: 'Answers `{"id", "object": "file", "deleted": true}`.' },
  {
    method: 'post', path: '/v1/batches', alias: '/batches', operationId: 'proxy-createBatch', summary: 'Create a batch (OpenAI Batch API)', anthropic: false, body: 'BatchCreateRequest',
    description: `Runs on the provider key holding \`input_file_id\`. ${BATCH_MONEY}`,
    errors: { '400': 'No `input_file_id`, an `endpoint` batches do not run, a window other than `24h`, an input file not uploaded with purpose `batch` or whose lines call another endpoint (`invalid_request`), or a key holding it that is gone, disabled or no longer runs batches (`provider_key_unavailable`). A provider\'s own 4xx answer is passed through.', '404': 'No batch input file with this ID for this account (`not_found`), as OpenAI answers.', '402': 'The batch\'s worst case does not fit the spendable credit (`insufficient_balance`, the message says what it would hold) or a spend cap; it never reaches the provider.' },
  },
  { method: 'get', path: '/v1/batches', alias: '/batches', operationId: 'proxy-listBatches', summary: 'List batches (OpenAI Batch API)', anthropic: false, description: 'The account\'s own batches, newest first, in OpenAI\'s list shape.', query: pageQuery(100, 20) },
  { method: 'get', path: '/v1/batches/{id}', alias: '/batches/{id}', operationId: 'proxy-retrieveBatch', summary: 'A batch (OpenAI Batch API)', anthropic: false, description: 'The Batch object as the provider answers it. Reading a batch never bills it: the poller does, once.' },
  { method: 'post', path: '/v1/batches/{id}/cancel', alias: '/batches/{id}/cancel', operationId: 'proxy-cancelBatch', summary: 'Cancel a batch (OpenAI Batch API)', anthropic: false, description: 'The batch goes `cancelling`, then `cancelled`; it is billed for the lines answered before it stopped.', errors: { '409': 'The batch has already ended (the provider\'s answer, passed through).' } },
  {
    method: 'post', path: '/v1/messages/batches', alias: '/messages/batches', operationId: 'proxy-createMessageBatch', summary: 'Create a message batch (Anthropic Message Batches)', anthropic: true, body: 'MessageBatchCreateRequest',
    description: `Routed by the one model its requests name. ${BATCH_MONEY}`,
    errors: { '400': 'No requests or a malformed one (`invalid_request`), a request naming no model or a model unusable as such (`invalid_model`), requests naming more than one model (`mixed_models`), or no key at the Level running Anthropic batches natively (`no_batch_key`). A provider\'s own 4xx answer is passed through.', '402': 'The batch\'s worst case does not fit the spendable credit (`insufficient_balance`, the message says what it would hold) or a spend cap; it never reaches the provider.' },
  },
  { method: 'get', path: '/v1/messages/batches', alias: '/messages/batches', operationId: 'proxy-listMessageBatches', summary: 'List message batches (Anthropic Message Batches)', anthropic: true, description: 'The account\'s own batches, in Anthropic\'s list shape (`data`, `has_more`, `first_id`, `last_id`).', query: [{ name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 1000, default: 20 } }, { name: 'after_id', in: 'query', required: false, schema: { type: 'string' } }, { name: 'before_id', in: 'query', required: false, schema: { type: 'string' } }] },
  { method: 'get', path: '/v1/messages/batches/{id}', alias: '/messages/batches/{id}', operationId: 'proxy-retrieveMessageBatch', summary: 'A message batch (Anthropic Message Batches)', anthropic: true, description: 'The MessageBatch object; its `results_url` points at the gateway, never at the provider. Reading a batch never bills it: the poller does, once.' },
  { method: 'get', path: '/v1/messages/batches/{id}/results', alias: '/messages/batches/{id}/results', operationId: 'proxy-messageBatchResults', summary: 'A message batch\'s results (Anthropic Message Batches, JSONL)', anthropic: true, raw: 'application/binary', description: 'One JSON line per request, streamed from the provider key that ran the batch, never held whole.' },
  { method: 'post', path: '/v1/messages/batches/{id}/cancel', alias: '/messages/batches/{id}/cancel', operationId: 'proxy-cancelMessageBatch', summary: 'Cancel a message batch (Anthropic Message Batches)', anthropic: true, description: 'The batch ends `canceled`; it is billed for the requests that succeeded before it stopped.' },
  { method: 'delete', path: '/v1/messages/batches/{id}', alias: '/messages/batches/{id}', operationId: 'proxy-deleteMessageBatch', summary: 'Delete a message batch (Anthropic Message Batches)', anthropic: true, description: 'An ended batch only (the provider refuses others). It is billed before its results are deleted.', errors: { '503': 'The batch is being billed (`batch_not_settled`); retry after `Retry-After`.' } },
];

export function batchFileOperation(r: BatchFileOperation): Operation {
  const error = (description: string) => errorAnswer(description, r.anthropic);
  const common: Record<string, string> = {
    '400': 'A malformed body or query (`invalid_request`, `invalid_value`), or the key holding the file or batch gone or disabled (`provider_key_unavailable`, `file_unavailable`). A provider\'s own 4xx answer is passed through.',
    '401': 'No key (`missing_api_key`), an unknown key (`invalid_api_key`) or a disabled account (`account_disabled`).',
    '403': 'Suspended (`account_suspended`), or refused by AllowIPs (`ip_not_allowed`), Resources (`resource_not_allowed`) or AllowModels (`model_not_allowed`).',
    '404': 'No file or batch with this ID for this account (`not_found`).',
    '502': 'The provider key could not be reached or failed (`upstream_error`).',
    '503': 'The gateway\'s database or shared state cannot be read now (`database_unavailable`, `shared_state_unavailable`).',
    '504': 'The provider key did not answer in time (`upstream_timeout`).',
  };
  if (!r.path.includes('{id}')) delete common['404'];
  const responses: Record<string, Response> = {
    '200': {
      description: r.raw ? 'The bytes, streamed as the provider sends them.' : 'The provider\'s answer (IDs and URLs as the gateway serves them).',
      headers: { ...CALL_HEADERS },
      content: r.raw ? { [r.raw]: { schema: { type: 'string', format: 'binary' } } } : { 'application/json': { schema: ref(PROVIDER_ANSWER_SCHEMA) } },
    },
  };
  for (const [status, description] of Object.entries({ ...common, ...r.errors }).sort(([a], [b]) => a.localeCompare(b))) responses[status] = error(description);
  return {
    tags: [PROXY_TAG.name],
    summary: r.summary,
    description: [
      aliasAndKey(r.alias),
      r.anthropic
        ? 'Sent to the provider with its key\'s `x-api-key` and the client\'s `anthropic-version` (default `2023-06-01`) and `anthropic-beta`. Errors use Anthropic\'s shape.'
        : 'Sent to the provider with its key. Errors use the `Error` envelope.',
      r.description,
      ...(r.method === 'post' && r.body ? [] : [WHO_OWNS]),
    ].join('\n\n'),
    operationId: r.operationId,
    security: PROXY_SECURITY,
    parameters: [
      ...(r.path.includes('{id}') ? [{ name: 'id', in: 'path', required: true, schema: { type: 'string', maxLength: 200, pattern: '^[A-Za-z0-9_-]+$' }, description: 'The provider\'s ID of the file or batch (`file-…`, `batch_…`, `msgbatch_…`).' }] : []),
      ...(r.query ?? []),
      { ...REQUEST_ID_PARAMETER },
    ],
    ...(r.body ? { requestBody: { required: true, content: { [r.upload ? 'multipart/form-data' : 'application/json']: { schema: ref(r.body) } } } } : {}),
    responses,
  };
}

export const batchFileBodies: Record<string, Schema> = {
  FileUploadForm: {
    type: 'object', required: ['file', 'purpose'], additionalProperties: true,
    description: 'A multipart file upload: `file` and `purpose` (`batch`, or `user_data`, `assistants`, `vision`… relayed as is). A `batch` file is JSONL, one request per line, all naming one model.',
    properties: { file: { type: 'string', format: 'binary' }, purpose: { type: 'string', example: 'batch' } },
  },
  BatchCreateRequest: {
    type: 'object', required: ['input_file_id', 'endpoint', 'completion_window'], additionalProperties: true,
    description: 'An OpenAI batch: the uploaded `batch` file and the endpoint its lines call.',
    properties: {
      input_file_id: { type: 'string' },
      endpoint: { type: 'string', enum: ['/v1/chat/completions', '/v1/responses', '/v1/embeddings', '/v1/completions'] },
      completion_window: { type: 'string', enum: ['24h'] },
      metadata: { type: 'object', additionalProperties: { type: 'string' }, ...passThrough('Labels') },
    },
    example: { input_file_id: 'file-abc123', endpoint: '/v1/chat/completions', completion_window: '24h' },
  },
  MessageBatchCreateRequest: {
    type: 'object', required: ['requests'], additionalProperties: true,
    description: 'An Anthropic message batch: requests of Messages params, all naming one model.',
    properties: {
      requests: {
        type: 'array', minItems: 1,
        items: { type: 'object', required: ['custom_id', 'params'], properties: { custom_id: { type: 'string' }, params: ref('MessagesRequest') } },
      },
    },
    example: { requests: [{ custom_id: 'q1', params: { model: 'claude-haiku-4-5', max_tokens: 256, messages: [{ role: 'user', content: 'Say hello' }] } }] },
  },
};
