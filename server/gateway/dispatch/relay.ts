import type { ResponseHeaders } from '../../adapters/upstream-http/types';
import type { ResponseStream } from '../transport';

export type UpstreamHeaders = ResponseHeaders;

/**
 * Upstream response headers that must not reach the client: hop-by-hop ones, those the HTTP
 * server writes itself (date, content-length), and those that describe the Owner's provider
 * account rather than the client's (organization, the provider's own rate limits, cookies).
 */
const DROP = new Set([
  'connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'proxy-connection', 'te', 'trailer',
  'transfer-encoding', 'upgrade', 'date', 'content-length', 'content-encoding', 'server', 'set-cookie', 'alt-svc',
  'openai-organization', 'openai-project', 'anthropic-organization-id', 'x-envoy-upstream-service-time',
  // The gateway answers with its own request ID and timing (call.ts stampHead).
  'x-request-id', 'server-timing',
]);

// AWS's own (x-amzn-requestid, x-amzn-errortype, x-amzn-bedrock-*) describe the Owner's AWS account and its internals.
export const dropped = (name: string): boolean => DROP.has(name) || name.startsWith('x-ratelimit-') || name.startsWith('anthropic-ratelimit-') || name.startsWith('x-amzn-');

/**
 * An unclean end of a stream already under way: the error event reaches the client, then the
 * connection is closed without the terminating chunk, so SDKs and plain HTTP clients alike
 * see a failure.
 */
export async function failStream(out: ResponseStream, errorEvent: Buffer): Promise<void> {
  await out.write(errorEvent);
  out.abort();
}
