import { randomBytes } from 'node:crypto';
import { jsonEvent } from './sse';
import {
  nowSeconds, textOf, Untranslatable, usageParts,
  type ChatChunk, type ChatDelta, type ChatMessage, type ChatRequest, type ChatResponse, type ChatToolCall, type ChatUsage, type ClientContext,
  type Json, type SseEvent, type StreamFailure, type ThinkingBlock, type WebSearchCall,
} from './types';
import { ChunkEncoder, type ClientFormat } from './format';
import { responsesTools, toolNames, type ToolNames } from './tools';
import { gatewayItemId, GATEWAY_REASONING_PREFIX, inputItems, isGatewayReasoning, newResponseId, signatureOf } from './gateway-items';

/**
 * OpenAI's Responses API as a client format, for keys without it (an Anthropic key, or an
 * OpenAI-format key marked chat-only): requests read into the canonical form, answers and
 * event streams written from it. A reasoning item carries Anthropic's thinking signature in
 * `encrypted_content`, so a client that sends its reasoning items back (as Codex does) keeps
 * the thinking of a tool-use loop valid. Only the gateway's own reasoning items are read that
 * way: another provider's `encrypted_content` is its own blob, never an Anthropic signature.
 */

const newId = (prefix: string) => `${prefix}${randomBytes(12).toString('hex')}`;

/** Fields that need state the provider keeps between calls, which a key without the Responses API has not. */
const STATEFUL = ['previous_response_id', 'conversation', 'background', 'prompt'] as const;

function contentToChat(content: unknown): string | Json[] {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const parts = content.map((p: Json): Json => {
    switch (p?.type) {
      case 'input_text': case 'output_text': case 'text': return { type: 'text', text: String(p.text ?? '') };
      case 'refusal': return { type: 'text', text: String(p.refusal ?? '') };
      case 'input_image':
        if (typeof p.image_url === 'string') return { type: 'image_url', image_url: { url: p.image_url, ...(p.detail ? { detail: p.detail } : {}) } };
        throw new Untranslatable('an image given by file_id needs the provider\'s file store; send image_url');
      case 'input_file':
        if (typeof p.file_data === 'string') return { type: 'file', file: { filename: p.filename ?? 'file', file_data: p.file_data } };
        throw new Untranslatable('a file given by file_id or file_url needs the provider\'s file store; send file_data');
      default: throw new Untranslatable(`a key without the Responses API has no ${String(p?.type)} content`);
    }
  });
  return parts.every((p) => p.type === 'text') ? parts.map((p) => p.text).join('') : parts;
}

/** A Responses API request as the canonical (Chat Completions) request. */
export function requestToChat(doc: Json): ChatRequest {
  for (const f of STATEFUL) if (doc[f] != null && doc[f] !== false) throw new Untranslatable(`${f} needs a key with the Responses API`);
  const messages: ChatMessage[] = [];
  if (typeof doc.instructions === 'string' && doc.instructions) messages.push({ role: 'system', content: doc.instructions });
  // Function calls and reasoning attach to the assistant turn they belong to.
  let assistant: ChatMessage | null = null;
  let thinking: ThinkingBlock[] = [];
  const turn = (): ChatMessage => {
    if (!assistant) {
      assistant = { role: 'assistant', content: null };
      messages.push(assistant);
    }
    return assistant;
  };
  const input = typeof doc.input === 'string' ? [{ type: 'message', role: 'user', content: doc.input }] : Array.isArray(doc.input) ? doc.input : [];
  const names = toolNames(doc.tools);
  for (const item of input as Json[]) {
    const type = item?.type ?? (item?.role ? 'message' : undefined);
    if (type === 'message') {
      if (item.role === 'assistant') {
        const a = turn();
        const text = textOf(contentToChat(item.content));
        a.content = (typeof a.content === 'string' ? a.content : '') + text;
      } else {
        assistant = null;
        const role = item.role === 'system' || item.role === 'developer' ? item.role : 'user';
        messages.push({ role, content: contentToChat(item.content) });
      }
    } else if (type === 'function_call') {
      const a = turn();
      (a.tool_calls ??= []).push({ id: item.call_id, type: 'function', function: { name: names.flat(item.name, item.namespace), arguments: item.arguments ?? '' } });
    } else if (type === 'function_call_output') {
      assistant = null;
      const out = item.output;
      messages.push({ role: 'tool', tool_call_id: item.call_id, content: typeof out === 'string' ? out : contentToChat(out) });
    } else if (type === 'reasoning') {
      const text = textOf(item.content) || (Array.isArray(item.summary) ? item.summary.map((s: Json) => s?.text ?? '').join('') : '');
      // Another provider's reasoning keeps its text, unsigned: the Anthropic adapter leaves it out.
      thinking.push({ type: 'thinking', thinking: text, signature: signatureOf(item) });
      const a = turn();
      a.thinking_blocks = thinking;
      a.reasoning_content = thinking.map((t) => t.thinking ?? '').join('');
      continue;
    } else if (type === 'web_search_call') {
      // A search the provider ran on an earlier turn: what it found is in the answer that followed it.
      continue;
    } else if (type === 'item_reference') {
      // The gateway's own items are resolved before (stages/conversation.ts): this one is a provider's.
      throw new Untranslatable(`item_reference ${String(item.id)} was not found: a key without the Responses API has only the items of conversations the gateway keeps`);
    } else throw new Untranslatable(`a key without the Responses API has no ${String(type)} input items`);
    if (assistant === null) thinking = [];
  }
  const out: ChatRequest = { model: doc.model, messages };
  if (typeof doc.max_output_tokens === 'number') out.max_tokens = doc.max_output_tokens;
  if (typeof doc.temperature === 'number') out.temperature = doc.temperature;
  if (typeof doc.top_p === 'number') out.top_p = doc.top_p;
  if (typeof doc.parallel_tool_calls === 'boolean') out.parallel_tool_calls = doc.parallel_tool_calls;
  const user = doc.safety_identifier ?? doc.user;
  if (typeof user === 'string') out.user = user;
  const effort = doc.reasoning?.effort;
  if (typeof effort === 'string' && effort !== 'none') out.reasoning_effort = effort;
  if (Array.isArray(doc.tools) && doc.tools.length) {
    const { functions, hosted } = responsesTools(doc.tools);
    if (functions.length) out.tools = functions;
    if (hosted.length) out.hosted_tools = hosted;
  }
  const tc = doc.tool_choice;
  if (tc === 'auto' || tc === 'none' || tc === 'required') out.tool_choice = tc;
  else if (tc?.type === 'function' && tc.name) out.tool_choice = { type: 'function', function: { name: names.flat(tc.name, tc.namespace) } };
  else if (tc != null) throw new Untranslatable(`a key without the Responses API has no tool_choice ${String(tc?.type)}`);
  const format = doc.text?.format;
  if (format?.type === 'json_schema') out.response_format = { type: 'json_schema', json_schema: { name: format.name ?? 'output', schema: format.schema, ...(typeof format.strict === 'boolean' ? { strict: format.strict } : {}) } };
  else if (format?.type === 'json_object') out.response_format = { type: 'json_object' };
  if (doc.stream === true) out.stream = true;
  return out;
}

export function usageFromChat(u: ChatUsage | null | undefined): Json {
  const p = usageParts(u);
  return {
    input_tokens: p.prompt,
    input_tokens_details: { cached_tokens: p.cached },
    output_tokens: p.completion,
    output_tokens_details: { reasoning_tokens: p.reasoning },
    total_tokens: p.prompt + p.completion,
  };
}

/** The fields every Response object carries, echoed from the request as OpenAI does. */
function responseBase(id: string, model: string, createdAt: number, req: Json): Json {
  return {
    id, object: 'response', created_at: createdAt, model, error: null, incomplete_details: null,
    instructions: typeof req.instructions === 'string' ? req.instructions : null,
    max_output_tokens: typeof req.max_output_tokens === 'number' ? req.max_output_tokens : null,
    metadata: req.metadata ?? {}, parallel_tool_calls: req.parallel_tool_calls ?? true, previous_response_id: null,
    reasoning: { effort: req.reasoning?.effort ?? null, summary: null }, store: req.store !== false,
    temperature: req.temperature ?? 1, text: req.text ?? { format: { type: 'text' } }, tool_choice: req.tool_choice ?? 'auto',
    tools: req.tools ?? [], top_p: req.top_p ?? 1, truncation: 'disabled',
  };
}

/** `signature` null: not known yet (a stream's item just opened); '' for thinking without one (a chat provider's reasoning). */
const reasoningItem = (id: string, text: string, signature: string | null | undefined): Json => ({
  type: 'reasoning', id, summary: [], content: [{ type: 'reasoning_text', text }],
  ...(signature === null ? {} : { encrypted_content: `${GATEWAY_REASONING_PREFIX}${signature ?? ''}` }),
});
const messageItem = (id: string, text: string, status: string): Json => ({
  type: 'message', id, status, role: 'assistant', content: status === 'in_progress' && text === '' ? [] : [{ type: 'output_text', text, annotations: [], logprobs: [] }],
});
/** A function call under the client's own name, with its namespace when the function is in one (tools.ts). */
function callItem(id: string, tc: ChatToolCall, status: string, names: ToolNames): Json {
  const own = names.client(tc.function.name);
  return { type: 'function_call', id, call_id: tc.id, name: own.name, ...(own.namespace !== undefined ? { namespace: own.namespace } : {}), arguments: tc.function.arguments, status };
}

/** A search the provider ran, as OpenAI's web_search_call item; its sources only when the request included them, as OpenAI does. */
function webSearchItem(id: string, w: WebSearchCall, status: string, req: Json): Json {
  const sources = Array.isArray(req.include) && req.include.includes('web_search_call.action.sources');
  return {
    type: 'web_search_call', id, status,
    action: { type: 'search', query: w.query, ...(sources ? { sources: w.sources.map((url) => ({ type: 'url', url })) } : {}) },
  };
}

function finished(finish: string | null | undefined): { status: string; incomplete_details: Json | null } {
  if (finish === 'length') return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
  if (finish === 'content_filter') return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
  return { status: 'completed', incomplete_details: null };
}

/** A canonical chat completion as a Response object. */
export function responseFromChat(res: ChatResponse, ctx: ClientContext): Json {
  const choice = res.choices?.[0];
  const m = choice?.message ?? { role: 'assistant' };
  const output: Json[] = [];
  const id = newResponseId();
  if (m.thinking_blocks?.length) {
    for (const t of m.thinking_blocks) if (t.type === 'thinking') output.push(reasoningItem(gatewayItemId('rs', id, output.length), t.thinking ?? '', t.signature));
  } else if (m.reasoning_content) output.push(reasoningItem(gatewayItemId('rs', id, output.length), m.reasoning_content, undefined));
  for (const w of m.web_searches ?? []) output.push(webSearchItem(gatewayItemId('ws', id, output.length), w, w.failed ? 'failed' : 'completed', ctx.request));
  const text = textOf(m.content);
  if (text) output.push(messageItem(gatewayItemId('msg', id, output.length), text, 'completed'));
  const names = toolNames(ctx.request.tools);
  for (const tc of m.tool_calls ?? []) output.push(callItem(gatewayItemId('fc', id, output.length), tc, 'completed', names));
  const response = {
    ...responseBase(id, res.model, res.created || nowSeconds(), ctx.request),
    ...finished(choice?.finish_reason), output, usage: usageFromChat(res.usage),
  };
  if (response.status === 'completed') ctx.completed = response;
  return response;
}

type Item = { index: number; json: Json; kind: 'reasoning' | 'message' | 'call'; text: string; signature?: string };

/** Canonical chunks as the Responses API's typed events, ending with response.completed (or response.incomplete) and its usage. */
class ResponsesEncoder extends ChunkEncoder {
  private seq = 0;
  private readonly id = newResponseId();
  /** An error event went out: whatever follows, the answer did not complete. */
  private broken = false;
  private readonly createdAt = nowSeconds();
  private model = '';
  private open: Item | null = null;
  private items: Json[] = [];
  private tools = new Map<number, Item>();
  private readonly names: ToolNames;

  constructor(private readonly ctx: ClientContext) {
    super();
    this.names = toolNames(ctx.request.tools);
  }

  private ev(type: string, fields: Json): SseEvent {
    return jsonEvent({ type, sequence_number: this.seq++, ...fields }, type);
  }

  private response(status: string, extra: Json = {}): Json {
    return { ...responseBase(this.id, this.model, this.createdAt, this.ctx.request), status, output: this.items, usage: null, ...extra };
  }

  private close(out: SseEvent[]): void {
    const it = this.open;
    if (!it) return;
    this.open = null;
    const at = { item_id: it.json.id, output_index: it.index };
    if (it.kind === 'message') {
      it.json = messageItem(it.json.id, it.text, 'completed');
      out.push(this.ev('response.output_text.done', { ...at, content_index: 0, text: it.text, logprobs: [] }));
      out.push(this.ev('response.content_part.done', { ...at, content_index: 0, part: it.json.content[0] }));
    } else if (it.kind === 'reasoning') {
      it.json = reasoningItem(it.json.id, it.text, it.signature);
      out.push(this.ev('response.reasoning_text.done', { ...at, content_index: 0, text: it.text }));
    } else {
      it.json = { ...it.json, arguments: it.text, status: 'completed' };
      out.push(this.ev('response.function_call_arguments.done', { ...at, name: it.json.name, arguments: it.text }));
    }
    this.items[it.index] = it.json;
    out.push(this.ev('response.output_item.done', { output_index: it.index, item: it.json }));
  }

  private openItem(kind: Item['kind'], json: Json, out: SseEvent[]): Item {
    this.close(out);
    const it: Item = { index: this.items.length, json, kind, text: '' };
    this.items.push(json);
    this.open = it;
    out.push(this.ev('response.output_item.added', { output_index: it.index, item: json }));
    if (kind === 'message') out.push(this.ev('response.content_part.added', { item_id: json.id, output_index: it.index, content_index: 0, part: { type: 'output_text', text: '', annotations: [], logprobs: [] } }));
    return it;
  }

  protected failed(f: StreamFailure, out: SseEvent[]): void {
    this.broken = true;
    // `error` in the data makes the openai SDK raise, as on its own error event.
    out.push(this.ev('error', { code: f.error.code ?? f.error.type, message: f.error.message, param: null, error: f.error }));
  }

  protected opened(c: ChatChunk, out: SseEvent[]): void {
    this.model = c.model;
    out.push(this.ev('response.created', { response: this.response('in_progress') }));
    out.push(this.ev('response.in_progress', { response: this.response('in_progress') }));
  }

  protected delta(d: ChatDelta, out: SseEvent[]): void {
    if (d.web_search) this.searched(d.web_search, out);
    if (d.reasoning_content) {
      const it = this.open?.kind === 'reasoning' ? this.open : this.openItem('reasoning', reasoningItem(gatewayItemId('rs', this.id, this.items.length), '', null), out);
      it.text += d.reasoning_content;
      out.push(this.ev('response.reasoning_text.delta', { item_id: it.json.id, output_index: it.index, content_index: 0, delta: d.reasoning_content }));
    }
    for (const t of d.thinking_blocks ?? []) {
      if (t.type === 'thinking' && this.open?.kind === 'reasoning') this.open.signature = t.signature;
    }
    if (d.content) {
      const it = this.open?.kind === 'message' ? this.open : this.openItem('message', messageItem(gatewayItemId('msg', this.id, this.items.length), '', 'in_progress'), out);
      it.text += d.content;
      out.push(this.ev('response.output_text.delta', { item_id: it.json.id, output_index: it.index, content_index: 0, delta: d.content, logprobs: [] }));
    }
    for (const tc of d.tool_calls ?? []) {
      let it = this.tools.get(tc.index);
      if (!it) {
        it = this.openItem('call', callItem(gatewayItemId('fc', this.id, this.items.length), { id: tc.id ?? newId('call_'), type: 'function', function: { name: tc.function?.name ?? '', arguments: '' } }, 'in_progress', this.names), out);
        this.tools.set(tc.index, it);
      }
      const delta = tc.function?.arguments;
      if (delta) {
        it.text += delta;
        out.push(this.ev('response.function_call_arguments.delta', { item_id: it.json.id, output_index: it.index, delta }));
      }
    }
  }

  /** A search the provider ran, as the events OpenAI sends for its own: the item added, searching, completed, done. */
  private searched(w: WebSearchCall, out: SseEvent[]): void {
    this.close(out);
    const index = this.items.length;
    const item = webSearchItem(gatewayItemId('ws', this.id, index), w, w.failed ? 'failed' : 'completed', this.ctx.request);
    this.items.push(item);
    const at = { item_id: item.id, output_index: index };
    out.push(this.ev('response.output_item.added', { output_index: index, item: { ...item, status: 'in_progress' } }));
    out.push(this.ev('response.web_search_call.in_progress', at));
    out.push(this.ev('response.web_search_call.searching', at));
    out.push(this.ev('response.web_search_call.completed', at));
    out.push(this.ev('response.output_item.done', { output_index: index, item }));
  }

  protected closed(out: SseEvent[]): void {
    this.close(out);
    const f = finished(this.finish);
    const response = this.response(f.status, { incomplete_details: f.incomplete_details, usage: usageFromChat(this.usage) });
    out.push(this.ev(f.status === 'completed' ? 'response.completed' : 'response.incomplete', { response }));
    if (f.status === 'completed' && !this.broken) this.ctx.completed = response;
  }
}

export const responsesClient: ClientFormat = {
  toChat: requestToChat,
  fromChatResponse: responseFromChat,
  encoder: (ctx) => new ResponsesEncoder(ctx),
};
