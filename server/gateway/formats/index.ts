import type { Endpoint, ProviderEndpoint } from '../providers/types';
import { errorFormatOf, translatedErrorBody } from '../errors';
import { anthropicClient, anthropicProvider } from './anthropic';
import { chatClient, chatProvider } from './chat';
import { fitToModel } from './fit-model';
import { geminiClient } from './gemini';
import { geminiEmbeddings } from './gemini-embed';
import { embeddingsToGemini, geminiProvider } from './gemini-provider';
import { converseProvider } from './converse';
import { responsesClient } from './responses';
import { SseReader, writeEvents } from './sse';
import { settleHostedTools, type ToolRule } from './tools';
import { checkShape } from './shape';
import type { ClientFormat, ProviderFormat, StreamDecoder, StreamEncoder } from './format';
import { isFailure, type ClientContext, type Json, type SseEvent, type StreamFailure } from './types';

export { Untranslatable } from './types';
export { geminiEventsAsArray } from './gemini-provider';
export { MalformedRequest } from './shape';
export type { ToolRule } from './tools';

/**
 * Translation between the format a client called in and the one a provider key answers in,
 * chosen per attempt from the key's kind. Every translation goes through the canonical Chat
 * Completions form (types.ts): the client's format reads into it and writes out of it, the
 * provider's format the same. A call whose format the key serves itself is never translated:
 * its bytes go upstream and back untouched.
 */

const CLIENTS: Partial<Record<Endpoint, ClientFormat>> = { chat: chatClient, messages: anthropicClient, responses: responsesClient, gemini: geminiClient };
const PROVIDERS: Partial<Record<ProviderEndpoint, ProviderFormat>> = { chat: chatProvider, messages: anthropicProvider, gemini: geminiProvider, converse: converseProvider };

/** Per client endpoint, the provider endpoints it can be translated to, in order of preference (the most faithful first). */
const TARGETS: Partial<Record<Endpoint, readonly ProviderEndpoint[]>> = {
  chat: ['messages', 'gemini', 'converse'],
  messages: ['chat', 'gemini', 'converse'],
  responses: ['messages', 'chat', 'gemini', 'converse'],
  gemini: ['messages', 'chat', 'converse'],
  gemini_embed: ['embeddings'],
  embeddings: ['gemini_embed'],
};

/** Translations outside the generation family, through their own canonical form: Gemini's embeddings through OpenAI's (gemini-embed.ts), and back (gemini-provider.ts). */
const OTHER: Readonly<Record<string, Translation>> = { 'gemini_embed>embeddings': geminiEmbeddings, 'embeddings>gemini_embed': embeddingsToGemini };

/**
 * The upstream endpoint that serves a client call on a key serving `native` itself: the
 * client's own when the key has it, else one it can be translated to, else null.
 */
export function upstreamEndpoint(client: Endpoint, native: ReadonlySet<ProviderEndpoint>): ProviderEndpoint | null {
  if (native.has(client)) return client;
  for (const t of TARGETS[client] ?? []) if (native.has(t)) return t;
  return null;
}

/** Bytes in, bytes out, as the upstream's events arrive; `end` gives what closes the client's answer. */
export interface StreamTranslator {
  push(bytes: Uint8Array): Buffer;
  end(): Buffer;
  /** The client's content type when its stream is not server-sent events (Gemini's JSON array). */
  readonly contentType?: string;
  /** What ends an interrupted stream framed otherwise than as events; undefined: the error event of the client's envelope. */
  readonly interrupted?: (message: string, requestId: string) => Buffer;
}

export interface Translation {
  readonly client: Endpoint;
  readonly upstream: ProviderEndpoint;
  /** The client's request as the upstream's (throws MalformedRequest, or Untranslatable). */
  request(doc: Json, tools?: ToolRule): Json;
  /** A whole 2xx upstream answer as the client's. */
  response(body: Buffer, ctx: ClientContext): Buffer;
  /** An upstream error answer in the client's error shape, its status and message kept. */
  error(status: number, body: Buffer): Buffer;
  stream(ctx: ClientContext): StreamTranslator;
}

const cache = new Map<string, Translation>();

/** The translation from `client` to `upstream` (which differ), or undefined when there is none. */
export function translation(client: Endpoint, upstream: ProviderEndpoint): Translation | undefined {
  const key = `${client}>${upstream}`;
  let t = cache.get(key) ?? OTHER[key];
  if (t) return t;
  const from = CLIENTS[client];
  const to = PROVIDERS[upstream];
  if (!from || !to) return undefined;
  t = build(client, upstream, from, to);
  cache.set(key, t);
  return t;
}


function build(client: Endpoint, upstream: ProviderEndpoint, from: ClientFormat, to: ProviderFormat): Translation {
  const format = errorFormatOf(client);
  return {
    client,
    upstream,
    // Tools the key lacks are kept, dropped or refused by one rule (tools.ts), under the Owner's policy in `tools`.
    request: (doc, tools) => {
      checkShape(client, doc);
      // Written by the gateway, so made valid for the model it reaches (fit-model.ts).
      return fitToModel(upstream, settleHostedTools(from.toChat(doc), upstream, tools), to.fromChat);
    },
    response: (body, ctx) => Buffer.from(JSON.stringify(from.fromChatResponse(named(to.toChatResponse(JSON.parse(body.toString('utf8'))), ctx), ctx))),
    error: (status, body) => translatedErrorBody(format, status, body),
    stream: (ctx) => new Translator(to.decoder(), from.encoder(ctx), ctx),
  };
}

/** An upstream that names no model in its answer (Bedrock's Converse) answers with the model the client asked for. */
function named<T extends { model: string }>(res: T, ctx: ClientContext): T {
  if (!res.model && typeof ctx.request?.model === 'string') res.model = ctx.request.model;
  return res;
}

/** What ends a translated stream whose upstream sent an event its own format does not have the shape of. */
const UNREADABLE: StreamFailure = { error: { message: 'The upstream answer could not be read', type: 'api_error', code: 'upstream_error' } };

class Translator implements StreamTranslator {
  private readonly reader = new SseReader();
  /** An upstream event could not be converted: the client got its format's error event, and nothing follows it. */
  private broken = false;
  private readonly write: (events: readonly SseEvent[]) => string;
  readonly contentType?: string;
  readonly interrupted?: (message: string, requestId: string) => Buffer;

  constructor(private readonly decoder: StreamDecoder, private readonly encoder: StreamEncoder, private readonly ctx: ClientContext) {
    this.write = encoder.write ? (events) => encoder.write!(events) : writeEvents;
    this.contentType = encoder.contentType;
    if (encoder.interrupted) this.interrupted = (message, requestId) => Buffer.from(encoder.interrupted!(message, requestId));
  }

  private translate(events: ReturnType<SseReader['push']>, closing = false): string {
    if (this.broken) return '';
    let out = '';
    try {
      for (const e of events) for (const item of this.decoder.push(e)) out += this.write(this.encoder.push(isFailure(item) ? item : named(item, this.ctx)));
      if (closing) {
        for (const item of this.decoder.end?.() ?? []) out += this.write(this.encoder.push(item));
        out += this.write(this.encoder.end());
      }
    } catch {
      this.broken = true;
      out += this.write(this.encoder.push(UNREADABLE));
    }
    return out;
  }

  push(bytes: Uint8Array): Buffer {
    return Buffer.from(this.translate(this.reader.push(bytes)));
  }

  end(): Buffer {
    return Buffer.from(this.translate(this.reader.end(), true));
  }
}
