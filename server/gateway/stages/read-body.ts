/**
 * Stage 2, read body: the request JSON, parsed once, and the fields the proxy itself reads
 * (model, stream). Refuses 413 body_too_large, 400 invalid_json / invalid_request (not an
 * object) and 400 invalid_model.
 */
import { BodyTooLargeError } from '../../core/http/exchange';
import type { ProxyCall } from '../call';
import type { Refusal, Verdict } from '../errors';

const NOT_AN_OBJECT: Refusal = { status: 400, message: 'body: must be a JSON object', code: 'invalid_request' };
const NO_MODEL: Refusal = { status: 400, message: 'model: required, a model name', code: 'invalid_model' };

export async function readBody(c: ProxyCall): Promise<Verdict> {
  let raw: Buffer;
  try {
    raw = await c.ex.body();
  } catch (err) {
    if (err instanceof BodyTooLargeError) return { status: 413, message: `Request body exceeds ${c.ex.maxBodyBytes} bytes`, code: 'body_too_large' };
    throw err;
  }
  let doc: unknown;
  try {
    doc = JSON.parse(raw.toString('utf8'));
  } catch (err) {
    return { status: 400, message: `Malformed JSON body: ${(err as Error).message}`, code: 'invalid_json' };
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return NOT_AN_OBJECT;
  return takeFields(c, raw, doc as Record<string, unknown>);
}

/** Checks and keeps the fields the proxy reads; everything else travels upstream untouched. */
export function takeFields(c: ProxyCall, raw: Buffer, body: Record<string, unknown>): Verdict {
  const requested = body.model;
  if (typeof requested !== 'string' || requested === '' || requested.length > 200) return NO_MODEL;
  c.raw = raw;
  c.doc = body;
  c.requestedModel = requested;
  c.stream = body.stream === true && c.endpoint !== 'embeddings';
  const so = body.stream_options as { include_usage?: unknown } | undefined;
  c.injectUsage = c.stream && c.endpoint === 'chat' && so?.include_usage !== true;
  return null;
}
