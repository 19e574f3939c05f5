import { isFailure, type ChatChunk, type ChatDelta, type ChatRequest, type ChatResponse, type ChatUsage, type ClientContext, type Json, type SseEvent, type StreamFailure, type StreamItem } from './types';

/** Upstream events in, canonical chunks out, one event at a time. */
export interface StreamDecoder {
  push(e: SseEvent): StreamItem[];
  /** What the upstream's stream still owes when it ends: a failure when it ended before its last event (Converse). */
  end?(): StreamItem[];
}

/** Canonical chunks in, the client's events out; `end` closes the answer as its format ends one. */
export interface StreamEncoder {
  push(item: StreamItem): SseEvent[];
  end(): SseEvent[];
  /**
   * A client format whose stream is not server-sent events (Gemini's JSON array without
   * `alt=sse`) writes its events itself, under its own content type, and closes its framing
   * around the error that ends an interrupted stream.
   */
  readonly contentType?: string;
  write?(events: readonly SseEvent[]): string;
  interrupted?(message: string, requestId: string): string;
}

/**
 * The walk an encoder of typed events makes over canonical chunks (Anthropic's, the Responses
 * API's): its opening events once, each delta in turn, the finish reason and the usage noted
 * as they pass, and its closing events once, after the last chunk.
 */
export abstract class ChunkEncoder implements StreamEncoder {
  private started = false;
  private ended = false;
  protected finish: string | null = null;
  protected usage: ChatUsage | null = null;

  push(item: StreamItem): SseEvent[] {
    const out: SseEvent[] = [];
    if (isFailure(item)) {
      this.failed(item, out);
      return out;
    }
    if (!this.started) {
      this.started = true;
      this.opened(item, out);
    }
    if (item.usage) this.usage = item.usage;
    const choice = item.choices[0];
    if (!choice) return out;
    this.delta(choice.delta ?? {}, out);
    if (choice.finish_reason) this.finish = choice.finish_reason;
    return out;
  }

  end(): SseEvent[] {
    if (this.ended || !this.started) return [];
    this.ended = true;
    const out: SseEvent[] = [];
    this.closed(out);
    return out;
  }

  protected abstract opened(first: ChatChunk, out: SseEvent[]): void;
  protected abstract delta(d: ChatDelta, out: SseEvent[]): void;
  protected abstract failed(f: StreamFailure, out: SseEvent[]): void;
  protected abstract closed(out: SseEvent[]): void;
}

/** A format clients call the gateway in: its requests read into the canonical form, answers written from it. */
export interface ClientFormat {
  toChat(doc: Json): ChatRequest;
  fromChatResponse(res: ChatResponse, ctx: ClientContext): Json;
  encoder(ctx: ClientContext): StreamEncoder;
}

/** A format a provider kind answers in: requests written from the canonical form, answers read into it. */
export interface ProviderFormat {
  fromChat(req: ChatRequest): Json;
  toChatResponse(doc: Json): ChatResponse;
  decoder(): StreamDecoder;
}
