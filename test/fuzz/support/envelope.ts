/**
 * Why an error body is not the gateway's envelope `{"error":{"message","type","code"}}`
 * (nothing else beside `error`), or null when it is.
 */
export function envelopeProblem(text: string): string | null {
  const doc = parse(text);
  if (doc === undefined) return `not JSON: ${JSON.stringify(text.slice(0, 120))}`;
  if (!isObject(doc) || !isObject(doc.error)) return `no "error" object: ${text.slice(0, 160)}`;
  if (Object.keys(doc).length !== 1) return `fields beside "error": ${Object.keys(doc).join(', ')}`;
  const e = doc.error;
  if (typeof e.message !== 'string' || e.message === '') return 'error.message is not a non-empty string';
  if (typeof e.type !== 'string' || e.type === '') return 'error.type is not a non-empty string';
  if (typeof e.code !== 'string' && typeof e.code !== 'number') return 'error.code is not a string or number';
  return null;
}

/**
 * An error on the proxy routes. The gateway's own refusals use the envelope (Anthropic's
 * `{"type":"error","error":{"type","message"}}` on /v1/messages); a provider's 4xx passed
 * through keeps the provider's shape, which for OpenAI adds `param` and may carry a null code.
 */
export function proxyErrorProblem(text: string, anthropic: boolean): string | null {
  const doc = parse(text);
  if (doc === undefined) return `not JSON: ${JSON.stringify(text.slice(0, 120))}`;
  if (!isObject(doc) || !isObject(doc.error)) return `no "error" object: ${text.slice(0, 160)}`;
  const e = doc.error;
  if (typeof e.message !== 'string' || e.message === '') return 'error.message is not a non-empty string';
  if (typeof e.type !== 'string' || e.type === '') return 'error.type is not a non-empty string';
  if (anthropic) {
    if (doc.type !== 'error') return `Anthropic shape needs "type":"error", got ${JSON.stringify(doc.type)}`;
    return null;
  }
  if (!('code' in e)) return 'error.code is missing';
  return null;
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isObject(v: unknown): v is Record<string, any> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
