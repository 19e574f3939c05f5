import { jsonEvent } from './sse';
import { isFailure, type ChatChunk, type ChatRequest, type ChatResponse, type ClientContext, type Json, type SseEvent, type StreamItem } from './types';
import type { ClientFormat, ProviderFormat, StreamDecoder, StreamEncoder } from './format';

/**
 * OpenAI Chat Completions, the canonical form itself: as a client format and as a provider
 * format it converts nothing but the stream's framing and the usage chunk.
 */
export const chatClient: ClientFormat = {
  toChat: (doc) => doc as ChatRequest,
  fromChatResponse: (res) => res,
  encoder: (ctx) => new ChatEncoder(ctx),
};

export const chatProvider: ProviderFormat = {
  fromChat(req: ChatRequest): Json {
    // top_k (a Gemini client's topK) is no Chat Completions field: OpenAI refuses it, so it is left out (docs/proxy.md).
    if (req.top_k !== undefined) {
      const { top_k: _, ...rest } = req;
      req = rest as ChatRequest;
    }
    // The usage chunk is how the stream is billed and how translated streams learn their usage.
    if (req.stream === true) return { ...req, stream_options: { ...(req.stream_options as Json | undefined), include_usage: true } };
    return req;
  },
  toChatResponse: (doc) => doc as ChatResponse,
  decoder: () => new ChatDecoder(),
};

class ChatDecoder implements StreamDecoder {
  push(e: SseEvent): StreamItem[] {
    if (e.data === '[DONE]') return [];
    let v: Json;
    try { v = JSON.parse(e.data); } catch { return []; }
    if (v && typeof v.error === 'object' && v.error !== null) {
      return [{ error: { message: String(v.error.message ?? 'The upstream stream failed'), type: String(v.error.type ?? 'api_error'), code: v.error.code ?? undefined } }];
    }
    return Array.isArray(v?.choices) ? [v as ChatChunk] : [];
  }
}

/** Chunks as OpenAI sends them: `usage: null` on each and the usage chunk last when the client asked for usage, no usage at all otherwise. */
class ChatEncoder implements StreamEncoder {
  constructor(private readonly ctx: ClientContext) {}

  push(item: StreamItem): SseEvent[] {
    if (isFailure(item)) return [jsonEvent({ error: item.error }, 'error')];
    if (this.ctx.includeUsage) return [jsonEvent(item.usage === undefined ? { ...item, usage: null } : item)];
    if (item.choices.length === 0) return [];
    if (item.usage === undefined) return [jsonEvent(item)];
    const { usage: _, ...rest } = item;
    return [jsonEvent(rest)];
  }

  end(): SseEvent[] {
    return [{ data: '[DONE]' }];
  }
}
