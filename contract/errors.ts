import { TRPCError } from '@trpc/server';

export type ApiStatus = 400 | 401 | 402 | 403 | 404 | 409 | 413 | 415 | 429 | 500 | 502 | 503;

const trpcCode = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  402: 'PAYMENT_REQUIRED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  429: 'TOO_MANY_REQUESTS',
  500: 'INTERNAL_SERVER_ERROR',
  502: 'BAD_GATEWAY',
  503: 'SERVICE_UNAVAILABLE',
} as const satisfies Record<ApiStatus, string>;

/**
 * An error meant for the client: its status, a message that names what is wrong,
 * and a stable machine-readable code for the `{"error":{...}}` envelope.
 */
export class ApiError extends TRPCError {
  readonly status: ApiStatus;
  readonly apiCode: string;
  constructor(status: ApiStatus, message: string, apiCode?: string) {
    super({ code: trpcCode[status], message });
    this.status = status;
    this.apiCode = apiCode ?? defaultCode(status);
  }
}

export function defaultCode(status: number): string {
  switch (status) {
    case 400: return 'invalid_request';
    case 401: return 'invalid_api_key';
    case 402: return 'insufficient_balance';
    case 403: return 'forbidden';
    case 404: return 'not_found';
    case 405: return 'method_not_allowed';
    case 409: return 'conflict';
    case 413: return 'body_too_large';
    case 415: return 'unsupported_media_type';
    case 429: return 'rate_limit_exceeded';
    default: return status >= 500 ? 'internal_error' : 'error';
  }
}

/** The envelope's `type`, following the vocabulary AI clients already know. */
export function errorType(status: number): string {
  switch (status) {
    case 401: return 'authentication_error';
    case 402: return 'insufficient_balance_error';
    case 403: return 'permission_error';
    case 404: return 'not_found_error';
    case 409: return 'conflict_error';
    case 429: return 'rate_limit_error';
    default: return status >= 500 ? 'server_error' : 'invalid_request_error';
  }
}

export const badRequest = (message: string, code = 'invalid_request') => new ApiError(400, message, code);
export const notFound = (message: string) => new ApiError(404, message);
export const forbidden = (message: string) => new ApiError(403, message);
export const conflict = (message: string, code = 'conflict') => new ApiError(409, message, code);
