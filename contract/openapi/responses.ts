import type { Access } from '../trpc';
import type { RouteFacts } from './routes';
import type { OpenApiDocument, Operation, Schema } from './types';

export const ERROR_SCHEMA = 'Error';
export const ERROR_DETAIL_SCHEMA = 'ErrorDetail';
export const SECURITY_SCHEME = 'bearerAuth';

const errorRef = { $ref: `#/components/schemas/${ERROR_SCHEMA}` };

/** The envelope every error answers with (docs/decisions.md, Wire and errors); replaces trpc-to-openapi's `error.*` schemas, which describe tRPC's body, not ours. */
export const errorSchemas: Record<string, Schema> = {
  [ERROR_SCHEMA]: {
    type: 'object',
    description: 'Body of every error response.',
    required: ['error'],
    properties: { error: { $ref: `#/components/schemas/${ERROR_DETAIL_SCHEMA}` } },
    example: { error: { message: 'SecretKey: must be at least 20 characters', type: 'invalid_request_error', code: 'invalid_request' } },
  },
  [ERROR_DETAIL_SCHEMA]: {
    type: 'object',
    required: ['message', 'type', 'code'],
    properties: {
      message: { type: 'string', description: 'What is wrong, naming the offending field(s) when there are any.' },
      type: {
        type: 'string',
        description: 'Error class, in the vocabulary AI clients know: `invalid_request_error`, `authentication_error`, `permission_error`, `not_found_error`, `conflict_error`, `rate_limit_error`, `insufficient_balance_error`, `server_error`.',
      },
      code: {
        description: 'Stable machine-readable code, e.g. `invalid_api_key`, `invalid_json`, `duplicate`.',
        anyOf: [{ type: 'string' }, { type: 'integer' }],
      },
      request_id: { type: 'string', description: 'On the AI proxy routes: the request ID of the call (also in `x-request-id`), the key to its log lines.' },
    },
  },
};

const accessNote: Record<Access, string> = {
  public: 'No API key needed.',
  account: 'Any valid account API key.',
  manage: 'An account API key with manage permission; targets must be the caller\'s descendants.',
  owner: 'An Owner API key (Root is the Owner in single tenancy).',
  root: 'The Root API key.',
};

/** Statuses any operation of a kind can answer, whatever its route declares. */
function impliedErrors(op: Operation): Record<string, string> {
  const implied: Record<string, string> = {};
  const hasBody = Boolean(op.requestBody);
  if (hasBody || (op.parameters?.length ?? 0) > 0) implied['400'] = 'Invalid body or parameters';
  if (hasBody) {
    implied['413'] = 'Request body larger than MAX_BODY_BYTES';
    implied['415'] = 'Body not sent as application/json';
  }
  return implied;
}

/**
 * Rewrites one operation's responses and security from its route: the success status the
 * server really answers, every error status it can answer with the `Error` envelope, and
 * the Bearer scheme on everything that needs a key.
 */
export function refineOperation(op: Operation, route: RouteFacts): void {
  if (op.parameters?.length === 0) delete op.parameters;
  const responses = op.responses;
  if (route.successStatus === 201 && responses['200']) {
    responses['201'] = { ...responses['200'], description: 'Created' };
    delete responses['200'];
  }
  const errors = { ...impliedErrors(op), ...route.errors };
  for (const status of Object.keys(responses)) if (Number(status) >= 400) delete responses[status];
  for (const [status, description] of Object.entries(errors)) {
    responses[status] = { description, content: { 'application/json': { schema: { ...errorRef } } } };
  }

  if (route.access === 'public') delete op.security;
  else op.security = [{ [SECURITY_SCHEME]: [] }];
  const note = `Access: ${accessNote[route.access]}`;
  op.description = op.description ? `${op.description}\n\n${note}` : note;
}

/** trpc-to-openapi registers `error.BAD_REQUEST` & co.; nothing refers to them once the envelope is in place. */
export function dropLibraryErrorSchemas(doc: OpenApiDocument): void {
  const schemas = doc.components?.schemas ?? {};
  for (const name of Object.keys(schemas)) if (name.startsWith('error.')) delete schemas[name];
}
