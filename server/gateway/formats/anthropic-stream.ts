import { jsonEvent } from './sse';
import {
  nowSeconds,
  type ChatChunk, type ChatDelta, type ClientContext,
  type Json, type SseEvent, type StreamFailure, type StreamItem,
} from './types';
import { ChunkEncoder, type StreamDecoder } from './format';
import { finishOf, stopOf, usageFromChat, usageToChat } from './anthropic';
import { searchQuery, webSearchCall } from './tools';

/** Anthropic's Messages stream ⇄ canonical chunks, event by event as they arrive. */

/** Anthropic's events as canonical chunks: one index per tool call, the usage in a last chunk of its own. */
export class AnthropicDecoder implements StreamDecoder {
  private id = '';
  private model = '';
  private readonly created = nowSeconds();
  private usage: Json = {};
  /** Per content block index: its kind, its tool-call index, the thinking text so far and its signature. */
  private blocks = new Map<number, { kind: string; tool?: number; thinking?: string; signature?: string; id?: string; input?: string }>();
  private tools = 0;
  /** The query of each web search the provider started (server_tool_use), until its result arrives. */
  private searches = new Map<string, string>();

  private chunk(delta: ChatDelta, finish: string | null = null): ChatChunk {
    return { id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model, choices: [{ index: 0, delta, finish_reason: finish }] };
  }

  push(e: SseEvent): StreamItem[] {
    let v: Json;
    try { v = JSON.parse(e.data); } catch { return []; }
    switch (v?.type) {
      case 'message_start':
        this.id = String(v.message?.id ?? '');
        this.model = String(v.message?.model ?? '');
        this.usage = { ...v.message?.usage };
        return [this.chunk({ role: 'assistant', content: '' })];
      case 'content_block_start': {
        const b = v.content_block ?? {};
        if (b.type === 'tool_use') {
          const tool = this.tools++;
          this.blocks.set(v.index, { kind: 'tool', tool });
          return [this.chunk({ tool_calls: [{ index: tool, id: b.id, type: 'function', function: { name: b.name, arguments: '' } }] })];
        }
        if (b.type === 'server_tool_use') {
          // Anthropic runs it: no tool call for the client, only its query, for the search item that its result makes.
          const input = b.input && Object.keys(b.input).length ? JSON.stringify(b.input) : '';
          this.blocks.set(v.index, { kind: b.type, id: String(b.id), input });
          return [];
        }
        if (b.type === 'web_search_tool_result') {
          this.blocks.set(v.index, { kind: b.type });
          return [this.chunk({ web_search: webSearchCall(String(b.tool_use_id), this.searches.get(String(b.tool_use_id)) ?? '', b.content) })];
        }
        this.blocks.set(v.index, { kind: b.type, thinking: '' });
        if (b.type === 'text' && b.text) return [this.chunk({ content: b.text })];
        if (b.type === 'redacted_thinking') return [this.chunk({ thinking_blocks: [{ type: 'redacted_thinking', data: b.data }] })];
        return [];
      }
      case 'content_block_delta': {
        const d = v.delta ?? {};
        const block = this.blocks.get(v.index);
        if (d.type === 'text_delta') return [this.chunk({ content: d.text })];
        if (d.type === 'input_json_delta' && block?.tool !== undefined) return [this.chunk({ tool_calls: [{ index: block.tool, function: { arguments: d.partial_json } }] })];
        if (d.type === 'input_json_delta' && block?.kind === 'server_tool_use') {
          block.input += String(d.partial_json ?? '');
          return [];
        }
        if (d.type === 'thinking_delta') {
          if (block) block.thinking += d.thinking;
          return [this.chunk({ reasoning_content: d.thinking })];
        }
        if (d.type === 'signature_delta' && block) block.signature = (block.signature ?? '') + d.signature;
        return [];
      }
      case 'content_block_stop': {
        const block = this.blocks.get(v.index);
        if (block?.kind === 'server_tool_use') this.searches.set(block.id!, searchQuery(block.input));
        // The whole thinking block, signed, once it is complete: what the client sends back next turn.
        if (block?.kind === 'thinking') return [this.chunk({ thinking_blocks: [{ type: 'thinking', thinking: block.thinking, signature: block.signature ?? '' }] })];
        return [];
      }
      case 'message_delta': {
        Object.assign(this.usage, v.usage);
        const final = { ...this.chunk({}, finishOf(v.delta?.stop_reason) ?? 'stop') };
        return [final, { ...this.chunk({}), choices: [], usage: usageToChat(this.usage) }];
      }
      case 'error':
        return [{ error: { message: String(v.error?.message ?? 'The upstream stream failed'), type: String(v.error?.type ?? 'api_error') } }];
      default:
        return [];
    }
  }
}

type Open = { index: number; kind: 'text' | 'thinking' | 'tool' } | null;

/** Canonical chunks as Anthropic's events: message_start, a content block per kind in turn, message_delta with the stop reason and usage, message_stop. */
export class AnthropicEncoder extends ChunkEncoder {
  private open: Open = null;
  private next = 0;
  /** Tool-call index → content block index. */
  private toolBlocks = new Map<number, number>();

  constructor(private readonly ctx?: ClientContext) {
    super();
  }

  /**
   * As Anthropic does, message_start names the input tokens (Claude Code sizes its context
   * window by them): the provider's count when its first chunk has one, else the gateway's
   * estimate; message_delta then gives the provider's exact count, which clients take over it.
   */
  protected opened(c: ChatChunk, out: SseEvent[]): void {
    const usage = c.usage?.prompt_tokens
      ? { ...usageFromChat(c.usage), output_tokens: 0 }
      : { input_tokens: this.ctx?.estimateInput?.() ?? 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 };
    out.push(ev('message_start', {
      message: { id: c.id, type: 'message', role: 'assistant', model: c.model, content: [], stop_reason: null, stop_sequence: null, usage },
    }));
  }

  private close(out: SseEvent[]): void {
    if (!this.open) return;
    out.push(ev('content_block_stop', { index: this.open.index }));
    this.open = null;
  }

  private openBlock(kind: 'text' | 'thinking' | 'tool', block: Json, out: SseEvent[]): number {
    this.close(out);
    const index = this.next++;
    this.open = { index, kind };
    out.push(ev('content_block_start', { index, content_block: block }));
    return index;
  }

  protected failed(f: StreamFailure, out: SseEvent[]): void {
    out.push(ev('error', { error: { type: f.error.type === 'invalid_request_error' ? f.error.type : 'api_error', message: f.error.message } }));
  }

  protected delta(d: ChatDelta, out: SseEvent[]): void {
    if (d.reasoning_content) {
      if (this.open?.kind !== 'thinking') this.openBlock('thinking', { type: 'thinking', thinking: '', signature: '' }, out);
      out.push(ev('content_block_delta', { index: this.open!.index, delta: { type: 'thinking_delta', thinking: d.reasoning_content } }));
    }
    for (const t of d.thinking_blocks ?? []) {
      if (t.type === 'redacted_thinking') {
        this.openBlock('thinking', { type: 'redacted_thinking', data: t.data }, out);
        this.close(out);
      } else if (t.signature) {
        if (this.open?.kind !== 'thinking') this.openBlock('thinking', { type: 'thinking', thinking: '', signature: '' }, out);
        out.push(ev('content_block_delta', { index: this.open!.index, delta: { type: 'signature_delta', signature: t.signature } }));
      }
    }
    if (d.content) {
      if (this.open?.kind !== 'text') this.openBlock('text', { type: 'text', text: '' }, out);
      out.push(ev('content_block_delta', { index: this.open!.index, delta: { type: 'text_delta', text: d.content } }));
    }
    for (const tc of d.tool_calls ?? []) {
      let index = this.toolBlocks.get(tc.index);
      if (index === undefined) {
        index = this.openBlock('tool', { type: 'tool_use', id: tc.id ?? `toolu_${tc.index}`, name: tc.function?.name ?? '', input: {} }, out);
        this.toolBlocks.set(tc.index, index);
      }
      if (tc.function?.arguments) out.push(ev('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: tc.function.arguments } }));
    }
  }

  protected closed(out: SseEvent[]): void {
    this.close(out);
    // Without the provider's usage, only the output count: the estimate message_start gave stands.
    const usage = this.usage ? usageFromChat(this.usage) : { output_tokens: 0 };
    out.push(ev('message_delta', { delta: { stop_reason: stopOf(this.finish), stop_sequence: null }, usage }));
    out.push(ev('message_stop', {}));
  }
}

const ev = (type: string, fields: Json): SseEvent => jsonEvent({ type, ...fields }, type);
