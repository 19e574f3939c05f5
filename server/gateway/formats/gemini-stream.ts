import type { StreamEncoder } from './format';
import { functionCallParts, geminiFinish, includesThoughts, usageMetadataOf } from './gemini';
import { isFailure, type ChatToolCall, type ChatUsage, type ClientContext, type Json, type SseEvent, type StreamItem } from './types';
import { proxyErrorBody } from '../errors';

/**
 * Canonical chunks as Gemini's streamGenerateContent answer: each text (or, when asked for,
 * thought) delta as one GenerateContentResponse; a function call once its arguments are whole
 * (Gemini sends a call in one piece); and one last chunk carrying the finish reason and the
 * usage, since a Chat Completions stream names its usage after its finish reason and Gemini's
 * clients read exactly one `finishReason`. With `alt=sse` each is an event; without, the
 * chunks are the elements of one JSON array written as they come.
 */
export class GeminiEncoder implements StreamEncoder {
  private started = false;
  private ended = false;
  private finish: string | null = null;
  private usage: ChatUsage | null = null;
  private model = '';
  private id = '';
  /** Tool calls by their chunk index, until the finish (their arguments arrive in pieces). */
  private readonly calls = new Map<number, ChatToolCall>();
  private readonly thoughts: boolean;
  readonly contentType?: string;
  private readonly array: boolean;
  /** Elements of the JSON array written so far (the first opens it). */
  private written = 0;
  private closed = false;

  constructor(ctx: ClientContext) {
    this.thoughts = includesThoughts(ctx.request);
    this.array = ctx.jsonArray === true;
    if (this.array) this.contentType = 'application/json; charset=UTF-8';
  }

  private chunk(parts: Json[], last = false): SseEvent {
    const candidate: Json = { content: { role: 'model', parts }, index: 0 };
    if (last) candidate.finishReason = geminiFinish(this.finish);
    const body: Json = { candidates: [candidate] };
    if (last) body.usageMetadata = usageMetadataOf(this.usage);
    body.modelVersion = this.model;
    body.responseId = this.id;
    return { data: JSON.stringify(body) };
  }

  push(item: StreamItem): SseEvent[] {
    if (this.ended) return [];
    if (isFailure(item)) {
      this.ended = true;
      return [{ data: proxyErrorBody('gemini', 500, item.error.message, item.error.code ?? 'upstream_error') }];
    }
    this.started = true;
    if (item.model) this.model = item.model;
    if (item.id) this.id = item.id;
    if (item.usage) this.usage = item.usage;
    const choice = item.choices[0];
    if (!choice) return [];
    const d = choice.delta ?? {};
    if (choice.finish_reason) this.finish = choice.finish_reason;
    for (const tc of d.tool_calls ?? []) {
      const call = this.calls.get(tc.index);
      if (!call) this.calls.set(tc.index, { id: tc.id ?? `call_${tc.index}`, type: 'function', function: { name: tc.function?.name ?? '', arguments: tc.function?.arguments ?? '' } });
      else call.function.arguments += tc.function?.arguments ?? '';
    }
    const parts: Json[] = [];
    if (this.thoughts) {
      if (d.reasoning_content) parts.push({ text: d.reasoning_content, thought: true });
      // A signed thinking block closes with its signature: the client sends it back with the turn.
      for (const b of d.thinking_blocks ?? []) if (b.type === 'thinking' && b.signature) parts.push({ text: '', thought: true, thoughtSignature: b.signature });
    }
    if (typeof d.content === 'string' && d.content) parts.push({ text: d.content });
    return parts.length ? [this.chunk(parts)] : [];
  }

  end(): SseEvent[] {
    if (this.ended || !this.started) {
      this.ended = true;
      return [];
    }
    this.ended = true;
    const calls = [...this.calls.entries()].sort((a, b) => a[0] - b[0]).map(([, c]) => c);
    const parts = calls.length ? functionCallParts(calls) : [{ text: '' }];
    return [this.chunk(parts, true)];
  }

  /** Without `alt=sse`: `[` before the first element, `,` between them, `]` after the last (written by `end`). */
  write(events: readonly SseEvent[]): string {
    if (!this.array) {
      let out = '';
      for (const e of events) out += `data: ${e.data}\r\n\r\n`;
      return out;
    }
    let out = '';
    for (const e of events) out += `${this.written++ === 0 ? '[' : ',\r\n'}${e.data}`;
    if (this.ended && !this.closed) {
      this.closed = true;
      out += this.written === 0 ? '[]' : ']';
    }
    return out;
  }

  interrupted(message: string, requestId: string): string {
    const error: SseEvent = { data: proxyErrorBody('gemini', 500, message, 'stream_interrupted', requestId) };
    this.ended = true;
    return this.write([error]);
  }
}
