import { randomBytes } from 'node:crypto';
import type { StreamDecoder } from './format';
import { finishOfConverse, usageOfConverse } from './converse';
import { nowSeconds, type ChatChunk, type ChatDelta, type Json, type SseEvent, type StreamItem } from './types';

/**
 * ConverseStream's events as canonical chunks ("ConverseStreamOutput", Bedrock API reference).
 * The AWS event-stream frames arrive already as server-sent events named by their
 * `:event-type` (providers/bedrock/event-stream.ts), each event's data its payload:
 * messageStart, contentBlockStart (a tool use's ID and name), contentBlockDelta (text, a tool
 * use's input in pieces, reasoning text and its signature), contentBlockStop, messageStop (the
 * stop reason) and metadata (the usage, last). An exception or a broken frame arrives as
 * Anthropic's `error` event, which the deframer writes for every Bedrock stream.
 *
 * Bedrock sends its events in that order; a stream that does not (a delta before its block's
 * start, a second messageStop) is read as far as it makes sense and never throws: a tool
 * delta for a block that never started is dropped, anything after the metadata is ignored. A
 * stream that ends before its messageStop was cut: it ends with a failure, never as if whole.
 */
export class ConverseDecoder implements StreamDecoder {
  private readonly id = `chatcmpl-${randomBytes(12).toString('hex')}`;
  private readonly created = nowSeconds();
  private started = false;
  private stopped = false;
  private over = false;
  private tools = 0;
  private calledTools = false;
  /** Per content block index: its tool-call index, or the reasoning text and signature gathered so far. */
  private readonly blocks = new Map<number, { tool?: number; thinking?: string; signature?: string }>();

  private chunk(delta: ChatDelta, finish: string | null = null): ChatChunk {
    return { id: this.id, object: 'chat.completion.chunk', created: this.created, model: '', choices: [{ index: 0, delta, finish_reason: finish }] };
  }

  push(e: SseEvent): StreamItem[] {
    if (this.over) return [];
    let v: Json;
    try { v = JSON.parse(e.data); } catch { return []; }
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return [];
    if (e.event === 'error' || v.type === 'error') {
      this.over = true;
      return [{ error: { message: String(v.error?.message ?? 'The upstream stream failed'), type: String(v.error?.type ?? 'api_error') } }];
    }
    const out: StreamItem[] = [];
    if (!this.started) {
      this.started = true;
      out.push(this.chunk({ role: 'assistant', content: '' }));
    }
    switch (e.event) {
      case 'contentBlockStart': {
        const use = v.start?.toolUse;
        if (this.stopped || typeof use !== 'object' || use === null) break;
        const tool = this.tools++;
        this.calledTools = true;
        this.blocks.set(Number(v.contentBlockIndex), { tool });
        out.push(this.chunk({ tool_calls: [{ index: tool, id: String(use.toolUseId ?? `tooluse_${randomBytes(9).toString('hex')}`), type: 'function', function: { name: String(use.name ?? ''), arguments: '' } }] }));
        break;
      }
      case 'contentBlockDelta': {
        if (this.stopped) break;
        this.delta(Number(v.contentBlockIndex), v.delta, out);
        break;
      }
      case 'contentBlockStop': {
        const block = this.blocks.get(Number(v.contentBlockIndex));
        // The whole reasoning block, signed, once complete: what the client sends back next turn.
        if (block?.thinking !== undefined && block.signature) out.push(this.chunk({ thinking_blocks: [{ type: 'thinking', thinking: block.thinking, signature: block.signature }] }));
        this.blocks.delete(Number(v.contentBlockIndex));
        break;
      }
      case 'messageStop': {
        if (this.stopped) break;
        this.stopped = true;
        out.push(this.chunk({}, finishOfConverse(v.stopReason, this.calledTools)));
        break;
      }
      case 'metadata': {
        // The usage comes last; a stream whose messageStop never came is still cut (end()).
        this.over = this.stopped;
        out.push({ id: this.id, object: 'chat.completion.chunk', created: this.created, model: '', choices: [], usage: usageOfConverse(v.usage) });
        break;
      }
      default:
        break;
    }
    return out;
  }

  private delta(index: number, d: unknown, out: StreamItem[]): void {
    if (typeof d !== 'object' || d === null) return;
    const delta = d as Json;
    if (typeof delta.text === 'string') {
      if (delta.text) out.push(this.chunk({ content: delta.text }));
      return;
    }
    if (typeof delta.toolUse === 'object' && delta.toolUse !== null) {
      const block = this.blocks.get(index);
      if (block?.tool !== undefined && typeof delta.toolUse.input === 'string') out.push(this.chunk({ tool_calls: [{ index: block.tool, function: { arguments: delta.toolUse.input } }] }));
      return;
    }
    const r = delta.reasoningContent;
    if (typeof r !== 'object' || r === null) return;
    let block = this.blocks.get(index);
    if (!block) this.blocks.set(index, (block = { thinking: '' }));
    if (typeof r.text === 'string') {
      block.thinking = (block.thinking ?? '') + r.text;
      if (r.text) out.push(this.chunk({ reasoning_content: r.text }));
    } else if (typeof r.signature === 'string') block.signature = (block.signature ?? '') + r.signature;
    else if (typeof r.redactedContent === 'string') out.push(this.chunk({ thinking_blocks: [{ type: 'redacted_thinking', data: r.redactedContent }] }));
  }

  end(): StreamItem[] {
    if (this.over || this.stopped) return [];
    this.over = true;
    return [{ error: { message: 'The upstream stream ended before the answer was complete', type: 'api_error', code: 'upstream_error' } }];
  }
}
