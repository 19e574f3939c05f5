import { randomBytes } from 'node:crypto';

/**
 * Request IDs: this process's random prefix and a counter, e.g. `3f9a1c07-1k2`. Unique across
 * instances and restarts without coordination, and a string concatenation per call.
 */
const prefix = randomBytes(4).toString('hex');
let counter = 0;

export function nextRequestId(): string {
  return `${prefix}-${(++counter).toString(36)}`;
}

/** Longest client-sent `x-request-id` taken; a UUID, ULID or W3C trace ID fits with room to spare. */
export const MAX_CLIENT_REQUEST_ID = 128;
/** Letters, digits and `-_.:@+=`: safe in a header, a log line, a JSON string and an error message. */
const SAFE = /^[A-Za-z0-9\-_.:@+=]+$/;

/**
 * The client's `x-request-id` when it is usable as the call's request ID (1 to 128 safe
 * characters), else undefined: the gateway then generates one. An unusable ID is not refused,
 * the answer just names the generated one.
 */
export function clientRequestId(sent: string | undefined): string | undefined {
  if (sent === undefined || sent.length === 0 || sent.length > MAX_CLIENT_REQUEST_ID) return undefined;
  return SAFE.test(sent) ? sent : undefined;
}
