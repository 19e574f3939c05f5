import { DEFAULT_OUTPUT_TOKENS } from '../../domain/pricing/estimate';
import {
  chatUsage, dataUrl, nowSeconds, parseArguments, textOf, Untranslatable, usageParts,
  type ChatMessage, type ChatRequest, type ChatResponse, type ChatToolCall, type ChatUsage,
  type Json, type ThinkingBlock,
} from './types';
import type { ClientFormat, ProviderFormat } from './format';
import { alternatingTurns, refuseChatOnly } from './turns';
import { AnthropicDecoder, AnthropicEncoder } from './anthropic-stream';
import { anthropicHostedTool, anthropicWebSearches, anthropicWebSearchTool, hostedToolsOf, type HostedTool } from './tools';

/**
 * Anthropic's Messages API ⇄ the canonical Chat Completions form, both ways: as a client
 * format (Claude Code on an OpenAI-format key) and as a provider format (an OpenAI client on
 * an Anthropic key).
 */

/** Thinking budget per OpenAI reasoning effort; Anthropic's minimum budget is 1,024. */
const EFFORT_BUDGET: Record<string, number> = { minimal: 1024, low: 2048, medium: 8192, high: 24_576 };

export function effortOfBudget(budget: number): string {
  return budget <= EFFORT_BUDGET.low ? 'low' : budget <= EFFORT_BUDGET.medium ? 'medium' : 'high';
}

const STOP_TO_FINISH: Record<string, string> = {
  end_turn: 'stop', stop_sequence: 'stop', pause_turn: 'stop', max_tokens: 'length', model_context_window_exceeded: 'length', tool_use: 'tool_calls', refusal: 'content_filter',
};
const FINISH_TO_STOP: Record<string, string> = { stop: 'end_turn', length: 'max_tokens', tool_calls: 'tool_use', function_call: 'tool_use', content_filter: 'refusal' };

export const finishOf = (stop: unknown): string | null => (typeof stop === 'string' ? STOP_TO_FINISH[stop] ?? 'stop' : null);
export const stopOf = (finish: unknown): string => (typeof finish === 'string' ? FINISH_TO_STOP[finish] ?? 'end_turn' : 'end_turn');

/** Anthropic's input_tokens leaves out cache reads and writes; the canonical prompt holds them all. */
export function usageToChat(u: Json | undefined): ChatUsage {
  const cached = Number(u?.cache_read_input_tokens) || 0;
  const cacheWrite = Number(u?.cache_creation_input_tokens) || 0;
  return chatUsage({
    prompt: (Number(u?.input_tokens) || 0) + cached + cacheWrite,
    cached,
    cacheWrite,
    completion: Number(u?.output_tokens) || 0,
    reasoning: Number(u?.output_tokens_details?.thinking_tokens) || 0,
  });
}

export function usageFromChat(u: ChatUsage | null | undefined): Json {
  const p = usageParts(u);
  return {
    input_tokens: p.prompt - p.cached - p.cacheWrite,
    cache_creation_input_tokens: p.cacheWrite,
    cache_read_input_tokens: p.cached,
    output_tokens: p.completion,
  };
}

// ---- requests -------------------------------------------------------------------------------

function imagePartToBlock(url: string): Json {
  const d = dataUrl(url);
  return d ? { type: 'image', source: { type: 'base64', media_type: d.mediaType, data: d.data } } : { type: 'image', source: { type: 'url', url } };
}

function partToBlock(p: Json): Json {
  switch (p?.type) {
    case 'text': return { type: 'text', text: String(p.text ?? '') };
    case 'image_url': return imagePartToBlock(String(p.image_url?.url ?? p.image_url ?? ''));
    case 'file': {
      const d = typeof p.file?.file_data === 'string' ? dataUrl(p.file.file_data) : null;
      if (d?.mediaType === 'application/pdf') return { type: 'document', source: { type: 'base64', media_type: d.mediaType, data: d.data } };
      throw new Untranslatable('an Anthropic key reads only PDF files given inline (file_data)');
    }
    default: throw new Untranslatable(`an Anthropic key has no ${String(p?.type)} content part`);
  }
}

const blocksOf = (content: unknown): Json[] =>
  typeof content === 'string' ? (content ? [{ type: 'text', text: content }] : []) : Array.isArray(content) ? content.map(partToBlock) : [];

function assistantBlocks(m: ChatMessage): Json[] {
  const out: Json[] = [];
  // Thinking goes back only with its signature: Anthropic refuses unsigned thinking.
  for (const t of m.thinking_blocks ?? []) {
    if (t.type === 'redacted_thinking') out.push({ type: 'redacted_thinking', data: t.data });
    else if (t.signature) out.push({ type: 'thinking', thinking: t.thinking ?? '', signature: t.signature });
  }
  out.push(...blocksOf(m.content));
  for (const tc of m.tool_calls ?? []) {
    if (!tc.function) throw new Untranslatable(`an Anthropic key has no ${String(tc.type)} tool calls`);
    out.push({ type: 'tool_use', id: tc.id, name: tc.function.name, input: parseArguments(tc.function.arguments, tc.function.name) });
  }
  return out;
}

function toolResult(m: ChatMessage): Json {
  const content = typeof m.content === 'string' ? m.content : blocksOf(m.content);
  return { type: 'tool_result', tool_use_id: m.tool_call_id, content };
}

function jsonSchemaOf(rf: Json | undefined): Json | undefined {
  if (!rf || rf.type === 'text') return undefined;
  if (rf.type === 'json_schema' && rf.json_schema?.schema) return { type: 'json_schema', schema: rf.json_schema.schema };
  throw new Untranslatable('response_format json_object has no Anthropic equivalent: use json_schema');
}

function toolChoiceFromChat(tc: unknown, parallel: unknown): Json | undefined {
  let out: Json | undefined;
  if (tc === 'auto') out = { type: 'auto' };
  else if (tc === 'none') out = { type: 'none' };
  else if (tc === 'required') out = { type: 'any' };
  else if (tc && typeof tc === 'object' && (tc as Json).function?.name) out = { type: 'tool', name: (tc as Json).function.name };
  if (parallel === false) out = { ...(out ?? { type: 'auto' }), disable_parallel_tool_use: true };
  return out;
}

/** Anthropic request fields an OpenAI-format provider has no equivalent of (server-side MCP, code execution containers). */
const ANTHROPIC_ONLY = ['mcp_servers', 'container'] as const;

/**
 * With thinking on, Anthropic refuses (400) a conversation whose last assistant turn uses a tool
 * without starting with its signed thinking: thinking that came from another provider, or none
 * kept by the client, has no signature and was left out. Such a call goes without thinking, as
 * LiteLLM does; the next turn, Anthropic's own, thinks again.
 */
function toolTurnLacksThinking(messages: Json[]): boolean {
  const last = messages.findLast((m) => m.role === 'assistant')?.content as Json[] | undefined;
  return !!last?.some((b) => b.type === 'tool_use') && last[0].type !== 'thinking' && last[0].type !== 'redacted_thinking';
}

/** A canonical (Chat Completions) request as a Messages API request. */
export function requestFromChat(req: ChatRequest): Json {
  refuseChatOnly(req, 'an Anthropic key');
  const system: string[] = [];
  const { messages, add } = alternatingTurns();
  for (const m of req.messages ?? []) {
    if (m.role === 'system' || m.role === 'developer') system.push(textOf(m.content));
    else if (m.role === 'user') add('user', blocksOf(m.content));
    else if (m.role === 'assistant') add('assistant', assistantBlocks(m));
    else if (m.role === 'tool') add('user', [toolResult(m)]);
    else throw new Untranslatable(`an Anthropic key has no ${String(m.role)} messages`);
  }
  const out: Json = { model: req.model, messages };
  if (system.length) out.system = system.join('\n\n');
  let maxTokens = Number(req.max_completion_tokens ?? req.max_tokens) || DEFAULT_OUTPUT_TOKENS;
  const effort = req.reasoning_effort;
  const budget = typeof effort === 'string' && !toolTurnLacksThinking(messages) ? EFFORT_BUDGET[effort] : undefined;
  if (budget !== undefined) {
    // The budget is part of max_tokens there, and must stay below it.
    if (maxTokens <= budget) maxTokens += budget;
    out.thinking = { type: 'enabled', budget_tokens: budget };
  }
  out.max_tokens = maxTokens;
  if (req.stop != null) out.stop_sequences = Array.isArray(req.stop) ? req.stop : [req.stop];
  // Anthropic's temperature runs 0–1, OpenAI's 0–2; with thinking it must be left at its default.
  if (typeof req.temperature === 'number' && budget === undefined) out.temperature = Math.min(1, Math.max(0, req.temperature));
  if (typeof req.top_p === 'number') out.top_p = budget === undefined ? req.top_p : Math.max(0.95, req.top_p);
  // A Gemini client's topK; Anthropic refuses it with thinking on.
  if (typeof req.top_k === 'number' && budget === undefined) out.top_k = req.top_k;
  const tools = req.tools as Json[] | undefined;
  if (Array.isArray(tools) && tools.length) {
    out.tools = tools.map((t) => {
      if (t?.type !== 'function' || !t.function?.name) throw new Untranslatable(`an Anthropic key has no ${String(t?.type)} tools`);
      return { name: t.function.name, ...(t.function.description ? { description: t.function.description } : {}), input_schema: t.function.parameters ?? { type: 'object', properties: {} } };
    });
  }
  // The hosted tools settleHostedTools kept for this key: web searches (tools.ts).
  for (const h of hostedToolsOf(req)) if (h.webSearch) (out.tools ??= []).push(anthropicWebSearchTool(h.webSearch));
  const choice = toolChoiceFromChat(req.tool_choice, req.parallel_tool_calls);
  if (choice && out.tools) out.tool_choice = choice;
  const format = jsonSchemaOf(req.response_format as Json | undefined);
  if (format) out.output_config = { format };
  if (typeof req.user === 'string') out.metadata = { user_id: req.user };
  if (req.stream === true) out.stream = true;
  return out;
}

function blockToPart(b: Json): Json {
  if (b.type === 'text') return { type: 'text', text: String(b.text ?? '') };
  if (b.type === 'image') {
    const s = b.source ?? {};
    if (s.type === 'base64') return { type: 'image_url', image_url: { url: `data:${s.media_type};base64,${s.data}` } };
    if (s.type === 'url') return { type: 'image_url', image_url: { url: s.url } };
  }
  if (b.type === 'document' && b.source?.type === 'base64') {
    return { type: 'file', file: { filename: 'document.pdf', file_data: `data:${b.source.media_type};base64,${b.source.data}` } };
  }
  throw new Untranslatable(`an OpenAI-format key has no ${String(b.type)}${b.source?.type ? ` (${b.source.type})` : ''} content`);
}

/** Parts, or the plain string when the content is only text (what OpenAI-compatible providers accept most widely). */
function partsOf(blocks: Json[]): string | Json[] {
  const parts = blocks.map(blockToPart);
  return parts.every((p) => p.type === 'text') ? parts.map((p) => p.text).join('') : parts;
}

function toolResultContent(content: unknown): string | Json[] {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return partsOf(content);
}

/** A Messages API request as the canonical (Chat Completions) request. */
export function requestToChat(doc: Json): ChatRequest {
  for (const f of ANTHROPIC_ONLY) if (doc[f] != null) throw new Untranslatable(`an OpenAI-format key has no ${f}`);
  const messages: ChatMessage[] = [];
  const sys = doc.system;
  if (sys) messages.push({ role: 'system', content: textOf(sys) });
  for (const m of (Array.isArray(doc.messages) ? doc.messages : []) as Json[]) {
    // A system message within the conversation stays at its place: chat completions take one anywhere too.
    if (m.role === 'system') {
      messages.push({ role: 'system', content: textOf(m.content) });
      continue;
    }
    const blocks: Json[] = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : Array.isArray(m.content) ? m.content : [];
    if (m.role === 'assistant') {
      const msg: ChatMessage = { role: 'assistant', content: null };
      const text: string[] = [];
      const calls: ChatToolCall[] = [];
      const thinking: ThinkingBlock[] = [];
      for (const b of blocks) {
        if (b.type === 'text') text.push(String(b.text ?? ''));
        else if (b.type === 'tool_use') calls.push({ id: b.id, type: 'function', function: { name: b.name, arguments: JSON.stringify(b.input ?? {}) } });
        else if (b.type === 'thinking') thinking.push({ type: 'thinking', thinking: b.thinking, signature: b.signature });
        else if (b.type === 'redacted_thinking') thinking.push({ type: 'redacted_thinking', data: b.data });
        else throw new Untranslatable(`an OpenAI-format key has no assistant ${String(b.type)} blocks`);
      }
      if (text.length) msg.content = text.join('');
      if (calls.length) msg.tool_calls = calls;
      if (thinking.length) {
        msg.reasoning_content = thinking.map((t) => t.thinking ?? '').join('');
        msg.thinking_blocks = thinking;
      }
      messages.push(msg);
      continue;
    }
    // A user turn: its tool results become tool messages, which must follow the assistant's calls directly.
    const rest: Json[] = [];
    for (const b of blocks) {
      if (b.type === 'tool_result') {
        const content = toolResultContent(b.content);
        messages.push({ role: 'tool', tool_call_id: b.tool_use_id, content: b.is_error === true && typeof content === 'string' ? `Error: ${content}` : content });
      } else rest.push(b);
    }
    if (rest.length) messages.push({ role: 'user', content: partsOf(rest) });
  }
  const out: ChatRequest = { model: doc.model, messages };
  const thinking = doc.thinking as Json | undefined;
  const effort = doc.output_config?.effort;
  if (thinking?.type === 'enabled' && typeof thinking.budget_tokens === 'number') out.reasoning_effort = effortOfBudget(thinking.budget_tokens);
  else if (typeof effort === 'string') out.reasoning_effort = effort === 'low' || effort === 'medium' ? effort : 'high';
  // max_completion_tokens where the model wants it: fit-model.ts, for the model the call reaches.
  if (typeof doc.max_tokens === 'number') out.max_tokens = doc.max_tokens;
  if (Array.isArray(doc.stop_sequences) && doc.stop_sequences.length) out.stop = doc.stop_sequences;
  if (typeof doc.temperature === 'number') out.temperature = doc.temperature;
  if (typeof doc.top_p === 'number') out.top_p = doc.top_p;
  if (Array.isArray(doc.tools) && doc.tools.length) {
    const functions: Json[] = [];
    const hosted: HostedTool[] = [];
    for (const t of doc.tools as Json[]) {
      if (t.type === undefined || t.type === 'custom') {
        functions.push({ type: 'function', function: { name: t.name, ...(t.description ? { description: t.description } : {}), parameters: t.input_schema ?? { type: 'object', properties: {} } } });
        continue;
      }
      // A server tool Anthropic runs: kept, dropped or refused for the key by tools.ts's rule.
      const h = anthropicHostedTool(t);
      if (!h) throw new Untranslatable(`an OpenAI-format key has no Anthropic server tool ${String(t.type)}`);
      hosted.push(h);
    }
    if (functions.length) out.tools = functions;
    if (hosted.length) out.hosted_tools = hosted;
  }
  const tc = doc.tool_choice as Json | undefined;
  if (tc?.type === 'auto') out.tool_choice = 'auto';
  else if (tc?.type === 'any') out.tool_choice = 'required';
  else if (tc?.type === 'none') out.tool_choice = 'none';
  else if (tc?.type === 'tool') out.tool_choice = { type: 'function', function: { name: tc.name } };
  if (tc?.disable_parallel_tool_use === true && out.tools) out.parallel_tool_calls = false;
  const schema = doc.output_config?.format ?? doc.output_format;
  if (schema?.type === 'json_schema') out.response_format = { type: 'json_schema', json_schema: { name: 'output', schema: schema.schema, strict: true } };
  if (typeof doc.metadata?.user_id === 'string') out.user = doc.metadata.user_id;
  if (doc.stream === true) out.stream = true;
  return out;
}

// ---- whole answers ----------------------------------------------------------------------------

/** A Messages API answer as a canonical chat completion. */
export function responseToChat(msg: Json): ChatResponse {
  const message: ChatMessage = { role: 'assistant', content: null };
  let text = '';
  let sawText = false;
  const calls: ChatToolCall[] = [];
  const thinking: ThinkingBlock[] = [];
  for (const b of (Array.isArray(msg.content) ? msg.content : []) as Json[]) {
    if (b.type === 'text') { text += b.text ?? ''; sawText = true; }
    else if (b.type === 'tool_use') calls.push({ id: b.id, type: 'function', function: { name: b.name, arguments: JSON.stringify(b.input ?? {}) } });
    else if (b.type === 'thinking') thinking.push({ type: 'thinking', thinking: b.thinking ?? '', signature: b.signature ?? '' });
    else if (b.type === 'redacted_thinking') thinking.push({ type: 'redacted_thinking', data: b.data });
  }
  if (sawText) message.content = text;
  if (calls.length) message.tool_calls = calls;
  const searches = anthropicWebSearches(Array.isArray(msg.content) ? msg.content : []);
  if (searches.length) message.web_searches = searches;
  if (thinking.length) {
    message.reasoning_content = thinking.map((t) => t.thinking ?? '').join('');
    message.thinking_blocks = thinking;
  }
  return {
    id: String(msg.id ?? ''), object: 'chat.completion', created: nowSeconds(), model: String(msg.model ?? ''),
    choices: [{ index: 0, message, finish_reason: finishOf(msg.stop_reason) }],
    usage: usageToChat(msg.usage),
  };
}

function thinkingBlocksOf(m: ChatMessage): Json[] {
  if (m.thinking_blocks?.length) {
    return m.thinking_blocks.map((t) => (t.type === 'redacted_thinking' ? { type: 'redacted_thinking', data: t.data } : { type: 'thinking', thinking: t.thinking ?? '', signature: t.signature ?? '' }));
  }
  return m.reasoning_content ? [{ type: 'thinking', thinking: m.reasoning_content, signature: '' }] : [];
}

/** A canonical chat completion as a Messages API answer. */
export function responseFromChat(res: ChatResponse): Json {
  const choice = res.choices?.[0];
  const m = choice?.message ?? { role: 'assistant' };
  const content: Json[] = thinkingBlocksOf(m);
  const text = textOf(m.content);
  if (text) content.push({ type: 'text', text });
  for (const tc of m.tool_calls ?? []) {
    let input: Json = {};
    try { input = JSON.parse(tc.function.arguments || '{}'); } catch { /* a model's malformed arguments reach the client as an empty input */ }
    content.push({ type: 'tool_use', id: tc.id, name: tc.function.name, input });
  }
  return {
    id: res.id, type: 'message', role: 'assistant', model: res.model, content,
    stop_reason: stopOf(choice?.finish_reason), stop_sequence: null, usage: usageFromChat(res.usage),
  };
}

export const anthropicClient: ClientFormat = {
  toChat: requestToChat,
  fromChatResponse: responseFromChat,
  encoder: (ctx) => new AnthropicEncoder(ctx),
};

export const anthropicProvider: ProviderFormat = {
  fromChat: requestFromChat,
  toChatResponse: responseToChat,
  decoder: () => new AnthropicDecoder(),
};
