/**
 * AWS's error answers as Anthropic's. Bedrock answers `{"message":"…"}` (some services
 * `{"Message":"…"}`) with the error's name in the `x-amzn-errortype` header
 * (`ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/`), or in the
 * body's `__type` ("Common errors", Amazon Bedrock API reference).
 * - A credential AWS refused is the key's failure: 403 whatever status it came with (AWS
 *   answers ExpiredTokenException and IncompleteSignatureException 400), so key health
 *   disables the key as for any provider's 401/403. Its message is ours: AWS's text for a bad
 *   signature spells the canonical request and string to sign.
 * - ThrottlingException is 429 (key health puts the key to sleep, failover serves the next),
 *   ValidationException 400, the others keep AWS's status and message.
 */
const AUTH = new Set([
  'AccessDeniedException', 'UnrecognizedClientException', 'InvalidSignatureException', 'ExpiredTokenException',
  'IncompleteSignatureException', 'MissingAuthenticationTokenException', 'InvalidClientTokenId', 'SignatureDoesNotMatch',
]);

const STATUS: Record<string, number> = { ThrottlingException: 429, ValidationException: 400, ServiceUnavailableException: 503, ResourceNotFoundException: 404 };

const ANTHROPIC_TYPES: Record<number, string> = {
  400: 'invalid_request_error', 401: 'authentication_error', 403: 'permission_error', 404: 'not_found_error',
  413: 'request_too_large', 429: 'rate_limit_error', 503: 'overloaded_error',
};

/** `ThrottlingException:http://…` or `com.amazon.coral.service#ThrottlingException` → `ThrottlingException`. */
export function awsErrorName(header: string | string[] | undefined, body: Record<string, unknown> | null): string {
  const raw = (Array.isArray(header) ? header[0] : header) ?? (typeof body?.__type === 'string' ? body.__type : '');
  return raw.split(':')[0].split('#').pop() ?? '';
}

export function bedrockError(status: number, body: Buffer, headers: Readonly<Record<string, string | string[]>>): { status: number; body: Buffer } {
  let doc: Record<string, unknown> | null = null;
  try {
    const v = JSON.parse(body.toString('utf8'));
    if (v && typeof v === 'object' && !Array.isArray(v)) doc = v;
  } catch { /* not JSON: the status speaks */ }
  // Already in Anthropic's shape (a proxy in front of Bedrock, or the mock's own 404): kept.
  if (doc?.type === 'error') return { status, body };
  const name = awsErrorName(headers['x-amzn-errortype'], doc);
  const said = typeof doc?.message === 'string' ? doc.message : typeof doc?.Message === 'string' ? doc.Message : '';
  let mapped = STATUS[name] ?? status;
  let message = said ? `${name ? `${name}: ` : ''}${said}` : name || `Bedrock answered ${status}`;
  if (AUTH.has(name)) {
    mapped = status === 401 ? 401 : 403;
    message = `AWS refused the key's credentials (${name})`;
  }
  const type = ANTHROPIC_TYPES[mapped] ?? (mapped >= 500 ? 'api_error' : 'invalid_request_error');
  return { status: mapped, body: Buffer.from(JSON.stringify({ type: 'error', error: { type, message } })) };
}
