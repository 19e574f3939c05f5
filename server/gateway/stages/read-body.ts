/**
 * Stage 2, read body: the request JSON, parsed once, and the fields the proxy itself reads
 * (model, stream, stream_options), checked before anything is mapped, forwarded or billed.
 * Refuses 413, 415 (not application/json), 400 invalid_json / not an object, 400
 * invalid_model (see model-name) and 400 invalid_request for a `stream` that is not a boolean,
 * `stream_options` that is not an object with a boolean `include_usage`, or a Messages request
 * without its `messages` and `max_tokens`; 400 unsupported_parameter for a Responses request
 * run in the background.
 */
import type { ProxyCall } from '../call';
import { CLIENT_LEFT, type Refusal, type Verdict } from '../errors';
import type { JsonBody } from '../transport';
import { modelNameProblem } from './model-name';
import { geminiBodyProblem } from '../formats/gemini';

/** The options of the body intake: the proxy always needs a body. */
export const BODY_REQUIRED = { required: true } as const;

const STREAM_NOT_BOOLEAN: Refusal = { status: 400, message: 'stream: must be a boolean', code: 'invalid_request' };
const OPTIONS_NOT_OBJECT: Refusal = { status: 400, message: 'stream_options: must be an object', code: 'invalid_request' };
const USAGE_NOT_BOOLEAN: Refusal = { status: 400, message: 'stream_options.include_usage: must be a boolean', code: 'invalid_request' };
// The Messages API's own required fields: checked here because a key of another format would
// otherwise be sent a translation of a request Anthropic itself refuses.
const MESSAGES_REQUIRED: Refusal = { status: 400, message: 'messages: Field required (an array of messages)', code: 'invalid_request' };
const MAX_TOKENS_REQUIRED: Refusal = { status: 400, message: 'max_tokens: Field required (a whole number of at least 1)', code: 'invalid_request' };

// A background response is delivered later, by polling the provider, with its usage: the call
// that starts it answers "queued" and nothing to bill, so a reservation could not be settled
// against what it really costs (docs/decisions.md).
const BACKGROUND_UNSUPPORTED: Refusal = {
  status: 400, code: 'unsupported_parameter',
  message: 'background: responses run in the background cannot be billed through this gateway; send the request without background (stream it for long work)',
};

/** Takes the body the intake read (`ex.readJsonObject(BODY_REQUIRED)`). */
export function readBody(c: ProxyCall, body: JsonBody): Verdict {
  if (!body.ok) return 'gone' in body ? CLIENT_LEFT : body.refusal;
  // `required` makes an empty body a refusal, so a value is there.
  return takeFields(c, body.raw, body.value!);
}

/**
 * Checks and keeps the fields the proxy reads; everything else travels upstream untouched.
 * Null counts as absent, as OpenAI's API has it.
 */
export function takeFields(c: ProxyCall, raw: Buffer, body: Record<string, unknown>): Verdict {
  // Gemini's routes name the model in the path; its body has none.
  const params = c.params;
  const requested = params ? params.model.replace(/^models\//, '') : body.model;
  const problem = modelNameProblem(requested);
  if (problem) return { status: 400, message: problem, code: 'invalid_model' };
  const endpoint = c.endpoint;
  // A route that does not stream (embeddings, moderations, rerank): its `stream` is the upstream's business, not read here.
  const streams = c.route.streams;
  const stream = body.stream;
  if (streams && stream != null && typeof stream !== 'boolean') return STREAM_NOT_BOOLEAN;
  let includeUsage: unknown;
  const usageOption = endpoint === 'chat' || endpoint === 'completions';
  if (usageOption) {
    const so = body.stream_options;
    if (so != null) {
      if (typeof so !== 'object' || Array.isArray(so)) return OPTIONS_NOT_OBJECT;
      includeUsage = (so as { include_usage?: unknown }).include_usage;
      if (includeUsage != null && typeof includeUsage !== 'boolean') return USAGE_NOT_BOOLEAN;
    }
  }
  if (endpoint === 'messages' || endpoint === 'count_tokens') {
    if (!Array.isArray(body.messages)) return MESSAGES_REQUIRED;
    const max = body.max_tokens;
    if (endpoint === 'messages' && !(typeof max === 'number' && Number.isInteger(max) && max >= 1)) return MAX_TOKENS_REQUIRED;
  }
  if (endpoint === 'responses' && body.background != null && body.background !== false) return BACKGROUND_UNSUPPORTED;
  if (params) {
    const problem = geminiBodyProblem(endpoint, body);
    if (problem) return { status: 400, message: problem, code: 'invalid_request' };
  }
  c.raw = raw;
  c.doc = body;
  c.requestedModel = requested as string;
  // Speech streams its audio as events when asked for `stream_format: "sse"`; a Gemini call by its method.
  c.stream = params ? params.stream !== null : endpoint === 'speech' ? body.stream_format === 'sse' : stream === true && streams;
  c.injectUsage = c.stream && usageOption && includeUsage !== true;
  return null;
}
