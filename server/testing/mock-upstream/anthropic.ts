import type { ServerResponse } from 'node:http';
import { createHash } from 'node:crypto';
import { answerText, contentText, estimateTokens, messagesText, mockId, playStream, sendJson, splitText, stopAt, usageFor, type Frame, type Usage } from './common';
import type { Call } from './openai';
import { anthropicModelRefusal } from './model-fit';
import { anthropicToolProblem, offersWebSearch, webSearchBlocks, webSearchFrames } from './server-tools';

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
  const written = Math.min(u.cache_write_tokens ?? 0, u.prompt_tokens - cached);
  return {
    input_tokens: u.prompt_tokens - cached - written,
    cache_creation_input_tokens: written,
    cache_read_input_tokens: cached,
    cache_creation: { ephemeral_5m_input_tokens: written - Math.min(u.cache_write_1h_tokens ?? 0, written), ephemeral_1h_input_tokens: Math.min(u.cache_write_1h_tokens ?? 0, written) },
    output_tokens: outputTokens,
    ...(u.reasoning_tokens ? { output_tokens_details: { thinking_tokens: u.reasoning_tokens } } : {}),
    service_tier: 'standard',
  };
}

/** A thinking block's signature: only the mock can make one, and it covers the thinking text, as Anthropic's do. */
export function signThinking(thinking: string): string {
  return `sig_${createHash('sha256').update(`mock-signing-key:${thinking}`).digest('base64')}`;
}

type Block = Record<string, any>;
const blocksOf = (content: unknown): Block[] => (Array.isArray(content) ? content.filter((b) => b && typeof b === 'object') : []);

/**
 * What Anthropic refuses in a conversation with thinking: a thinking block whose signature does
 * not match its text, and (thinking enabled) a last assistant turn with tool use that does
 * not start with its thinking block. Null when the messages pass.
 */
function thinkingProblem(body: Record<string, unknown>): string | null {
  const msgs = body.messages as { role?: string; content?: unknown }[];
  for (let i = 0; i < msgs.length; i++) {
    for (const [j, b] of blocksOf(msgs[i].content).entries()) {
      if (b.type === 'thinking' && b.signature !== signThinking(String(b.thinking ?? ''))) return `messages.${i}.content.${j}: Invalid \`signature\` in \`thinking\` block`;
    }
  }
  const enabled = (body.thinking as { type?: string } | undefined)?.type === 'enabled';
  const lastAssistant = msgs.map((m, i) => [m, i] as const).filter(([m]) => m.role === 'assistant').at(-1);
  if (enabled && lastAssistant) {
    const blocks = blocksOf(lastAssistant[0].content);
    if (blocks.some((b) => b.type === 'tool_use') && blocks[0]?.type !== 'thinking' && blocks[0]?.type !== 'redacted_thinking') {
      return `messages.${lastAssistant[1]}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${String(blocks[0]?.type)}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block.`;
    }
  }
  return null;
}

/** The request offers tools and its last turn is not a tool result: the behaviour's tool call is due. */
function toolCallDue(c: Call): boolean {
  if (!c.behaviour.toolCall || !Array.isArray(c.body.tools) || c.body.tools.length === 0) return false;
  const last = (c.body.messages as { role?: string; content?: unknown }[]).at(-1);
  return !(last?.role === 'user' && blocksOf(last.content).some((b) => b.type === 'tool_result'));
}

/**
 * The body fields Anthropic's count_tokens takes (API reference, "Count tokens in a Message":
 * messages, model, system, tools, tool_choice, thinking, mcp_servers, context_management,
 * output_config/output_format); anything else, max_tokens first, is refused as
 * "max_tokens: Extra inputs are not permitted" (seen from the API, e.g. Wei-Shaw/sub2api#4913).
 * Vertex's count-tokens:rawPredict takes its anthropic_version beside them.
 */
const COUNT_FIELDS = new Set(['model', 'messages', 'system', 'tools', 'tool_choice', 'thinking', 'mcp_servers', 'context_management', 'output_config', 'output_format']);

/**
 * Anthropic's tool-use system prompt, added to the input of a request with tools: 346 tokens for
 * Claude 4 models with tool_choice auto or none (Anthropic's tool-use pricing table).
 */
export const TOOL_USE_SYSTEM_TOKENS = 346;

/**
 * What count_tokens answers for a body: as Anthropic, the system prompt, the messages and the
 * tools' definitions with the tool-use system prompt, by the mock's own estimate (a quarter of
 * the characters). The mock's Messages usage leaves the tools out, so a count is never below
 * what the same body is billed there.
 */
export function countedInputTokens(body: Record<string, unknown>): number {
  const prompt = estimateTokens([contentText(body.system), messagesText(body.messages)].filter(Boolean).join('\n'));
  const tools = Array.isArray(body.tools) && body.tools.length > 0 ? estimateTokens(JSON.stringify(body.tools)) + TOOL_USE_SYSTEM_TOKENS : 0;
  return prompt + tools;
}

/** `POST /v1/messages/count_tokens`: `{input_tokens}` as countedInputTokens counts them; a field it does not take is refused. */
export function countTokens(c: Call, vertex = false): void {
  const extra = Object.keys(c.body).find((k) => !COUNT_FIELDS.has(k) && !(vertex && k === 'anthropic_version'));
  if (extra !== undefined) return anthropicError(c.res, 400, `${extra}: Extra inputs are not permitted`);
  sendJson(c.res, 200, { input_tokens: countedInputTokens(c.body) });
}

/**
 * Anthropic checks these before anything else; the mock does too, so a proxy that drops them is
 * caught. On Vertex the access token stands for the headers (its API version is in the body).
 */
export function anthropicPreconditions(c: Call, vertex = false): boolean {
  if (!vertex && !c.req.headers['x-api-key']) {
    anthropicError(c.res, 401, 'x-api-key header is required');
    return false;
  }
  if (!vertex && !c.req.headers['anthropic-version']) {
    anthropicError(c.res, 400, 'anthropic-version: header is required');
    return false;
  }
  if (typeof c.body.max_tokens !== 'number' && !/\/count[_-]tokens(:rawPredict)?$/.test(c.req.url ?? '')) {
    anthropicError(c.res, 400, 'max_tokens: Field required');
    return false;
  }
  if (!Array.isArray(c.body.messages)) {
    anthropicError(c.res, 400, 'messages: Field required');
    return false;
  }
  // Each message is an object with its role and content (Messages API reference, "messages":
  // object[]); Anthropic's validation names the place in its pydantic wording.
  const notObject = c.body.messages.findIndex((m: unknown) => typeof m !== 'object' || m === null || Array.isArray(m));
  if (notObject >= 0) {
    anthropicError(c.res, 400, `messages.${notObject}: Input should be a valid dictionary or object to extract fields from`);
    return false;
  }
  return true;
}

/**
 * `POST /v1/messages`, whole or as Anthropic's event stream: a signed thinking block first when
 * the request enables thinking, then the text (cut at a stop sequence) or the behaviour's tool call.
 */
export async function messages(c: Call): Promise<void> {
  const problem = anthropicToolProblem(c.body.tools) ?? thinkingProblem(c.body) ?? anthropicModelRefusal(c.body, c.model);
  if (problem) return anthropicError(c.res, 400, problem);
  const cut = stopAt(answerText(c.behaviour, c.model), c.body.stop_sequences);
  const text = cut.text;
  const prompt = [contentText(c.body.system), messagesText(c.body.messages)].filter(Boolean).join('\n');
  const usage = usageFor(c.behaviour, prompt, text);
  const id = mockId('msg_');
  const thinking = (c.body.thinking as { type?: string } | undefined)?.type === 'enabled' ? c.behaviour.thinking ?? 'Let me think about this.' : null;
  const tool = toolCallDue(c) ? { id: mockId('toolu_'), ...c.behaviour.toolCall! } : null;
  const stopReason = tool ? 'tool_use' : cut.stop !== null ? 'stop_sequence' : 'end_turn';
  // A search first, when the behaviour has one and the request offers the web search tool.
  const search = c.behaviour.webSearch && offersWebSearch(c.body.tools) ? c.behaviour.webSearch : null;
  const searched = search ? { server_tool_use: { web_search_requests: 1 } } : {};
  const message = (content: unknown[], done: boolean, u: ReturnType<typeof anthropicUsage>) => ({
    id, type: 'message', role: 'assistant', model: c.model, content, stop_reason: done ? stopReason : null, stop_sequence: done ? cut.stop : null, usage: u,
  });
  if (c.body.stream !== true) {
    const content: unknown[] = [];
    if (thinking !== null) content.push({ type: 'thinking', thinking, signature: signThinking(thinking) });
    if (search) {
      const b = webSearchBlocks(search);
      content.push(b.use, b.result);
    }
    if (tool) content.push({ type: 'tool_use', id: tool.id, name: tool.name, input: tool.arguments });
    else content.push({ type: 'text', text });
    sendJson(c.res, 200, message(content, true, { ...anthropicUsage(usage), ...searched }));
    return;
  }
  // As the real API does: message_start carries the input tokens (and an early output count);
  // message_delta carries the final, cumulative output count.
  const ev = (type: string, fields: Record<string, unknown>): Frame => ({ event: type, data: { type, ...fields } });
  const head = [ev('message_start', { message: message([], false, anthropicUsage(usage, 1)) })];
  let index = 0;
  if (thinking !== null) {
    head.push(
      ev('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } }),
      ...splitText(thinking, 2).map((t) => ev('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: t } })),
      ev('content_block_delta', { index, delta: { type: 'signature_delta', signature: signThinking(thinking) } }),
      ev('content_block_stop', { index }),
    );
    index += 1;
  }
  if (search) {
    head.push(...webSearchFrames(search, index));
    index += 2;
  }
  let content: Frame[];
  if (tool) {
    head.push(ev('content_block_start', { index, content_block: { type: 'tool_use', id: tool.id, name: tool.name, input: {} } }));
    content = splitText(JSON.stringify(tool.arguments), c.behaviour.chunks ?? 2).map((p) => ev('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: p } }));
  } else {
    head.push(ev('content_block_start', { index, content_block: { type: 'text', text: '' } }), ev('ping', {}));
    content = splitText(text, c.behaviour.chunks ?? 3).map((t) => ev('content_block_delta', { index, delta: { type: 'text_delta', text: t } }));
  }
  const tail = [
    ev('content_block_stop', { index }),
    ev('message_delta', { delta: { stop_reason: stopReason, stop_sequence: cut.stop }, usage: { output_tokens: usage.completion_tokens, ...(usage.reasoning_tokens ? { output_tokens_details: { thinking_tokens: usage.reasoning_tokens } } : {}), ...searched } }),
    ev('message_stop', {}),
  ];
  await playStream(c.req, c.res, c.behaviour, { head, content, tail });
}
