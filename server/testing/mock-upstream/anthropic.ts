import type { ServerResponse } from 'node:http';
import { answerText, contentText, messagesText, mockId, playStream, sendJson, splitText, usageFor, type Frame, type Usage } from './common';
import type { Call } from './openai';

const ANTHROPIC_ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};

export function anthropicError(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  const type = ANTHROPIC_ERROR_TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
  sendJson(res, status, { type: 'error', error: { type, message }, request_id: mockId('req_') }, headers);
}

function anthropicUsage(u: Usage, outputTokens = u.completion_tokens) {
  const cached = Math.min(u.cached_tokens ?? 0, u.prompt_tokens);
  return {
    input_tokens: u.prompt_tokens - cached,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: cached,
    output_tokens: outputTokens,
    service_tier: 'standard',
  };
}

/** Anthropic checks these before anything else; the mock does too, so a proxy that drops them is caught. */
export function anthropicPreconditions(c: Call): boolean {
  if (!c.req.headers['x-api-key']) {
    anthropicError(c.res, 401, 'x-api-key header is required');
    return false;
  }
  if (!c.req.headers['anthropic-version']) {
    anthropicError(c.res, 400, 'anthropic-version: header is required');
    return false;
  }
  if (typeof c.body.max_tokens !== 'number') {
    anthropicError(c.res, 400, 'max_tokens: Field required');
    return false;
  }
  if (!Array.isArray(c.body.messages)) {
    anthropicError(c.res, 400, 'messages: Field required');
    return false;
  }
  return true;
}

/** `POST /v1/messages`, whole or as Anthropic's event stream. */
export async function messages(c: Call): Promise<void> {
  const text = answerText(c.behaviour, c.model);
  const prompt = [contentText(c.body.system), messagesText(c.body.messages)].filter(Boolean).join('\n');
  const usage = usageFor(c.behaviour, prompt, text);
  const id = mockId('msg_');
  const message = (content: unknown[], stopReason: string | null, u: ReturnType<typeof anthropicUsage>) => ({
    id, type: 'message', role: 'assistant', model: c.model, content, stop_reason: stopReason, stop_sequence: null, usage: u,
  });
  if (c.body.stream !== true) {
    sendJson(c.res, 200, message([{ type: 'text', text }], 'end_turn', anthropicUsage(usage)));
    return;
  }
  // As the real API does: message_start carries the input tokens (and an early output count);
  // message_delta carries the final, cumulative output count.
  const ev = (type: string, fields: Record<string, unknown>): Frame => ({ event: type, data: { type, ...fields } });
  const head = [
    ev('message_start', { message: message([], null, anthropicUsage(usage, 1)) }),
    ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
    ev('ping', {}),
  ];
  const content = splitText(text, c.behaviour.chunks ?? 3).map((t) => ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: t } }));
  const tail = [
    ev('content_block_stop', { index: 0 }),
    ev('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: usage.completion_tokens } }),
    ev('message_stop', {}),
  ];
  await playStream(c.req, c.res, c.behaviour, { head, content, tail });
}
