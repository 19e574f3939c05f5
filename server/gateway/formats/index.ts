import type { Endpoint } from '../providers/types';
import { proxyErrorBody } from '../errors';
import { anthropicClient, anthropicProvider } from './anthropic';
import { chatClient, chatProvider } from './chat';
import { responsesClient } from './responses';
import { SseReader, writeEvents } from './sse';
import type { ClientFormat, ProviderFormat, StreamDecoder, StreamEncoder } from './format';
import type { ClientContext, Json } from './types';

export { Untranslatable } from './types';

/**
 * Translation between the format a client called in and the one a provider key answers in,
 * chosen per attempt from the key's kind. Every translation goes through the canonical Chat
 * Completions form (types.ts): the client's format reads into it and writes out of it, the
 * provider's format the same. A call whose format the key serves itself is never translated:
 * its bytes go upstream and back untouched.
 */

const CLIENTS: Partial<Record<Endpoint, ClientFormat>> = { chat: chatClient, messages: anthropicClient, responses: responsesClient };
const PROVIDERS: Partial<Record<Endpoint, ProviderFormat>> = { chat: chatProvider, messages: anthropicProvider };

/** Per client endpoint, the provider endpoints it can be translated to, in order of preference (the most faithful first). */
const TARGETS: Partial<Record<Endpoint, readonly Endpoint[]>> = {
  chat: ['messages'],
  messages: ['chat'],
  responses: ['messages', 'chat'],
};

/**
 * The upstream endpoint that serves a client call on a key serving `native` itself: the
 * client's own when the key has it, else one it can be translated to, else null.
 */
export function upstreamEndpoint(client: Endpoint, native: ReadonlySet<Endpoint>): Endpoint | null {
  if (native.has(client)) return client;
  for (const t of TARGETS[client] ?? []) if (native.has(t)) return t;
  return null;
}

/** Bytes in, bytes out, as the upstream's events arrive; `end` gives what closes the client's answer. */
export interface StreamTranslator {
  push(bytes: Uint8Array): Buffer;
  end(): Buffer;
}

export interface Translation {
  readonly client: Endpoint;
  readonly upstream: Endpoint;
  /** The client's request as the upstream's (throws Untranslatable). */
  request(doc: Json): Json;
  /** A whole 2xx upstream answer as the client's. */
  response(body: Buffer, ctx: ClientContext): Buffer;
  /** An upstream error answer in the client's error shape, its status and message kept. */
  error(status: number, body: Buffer): Buffer;
  stream(ctx: ClientContext): StreamTranslator;
}

const cache = new Map<string, Translation>();

/** The translation from `client` to `upstream` (which differ), or undefined when there is none. */
export function translation(client: Endpoint, upstream: Endpoint): Translation | undefined {
  const key = `${client}>${upstream}`;
  let t = cache.get(key);
  if (t) return t;
  const from = CLIENTS[client];
  const to = PROVIDERS[upstream];
  if (!from || !to) return undefined;
  t = build(client, upstream, from, to);
  cache.set(key, t);
  return t;
}

/** The message of an error body in either provider shape (OpenAI's `error.message`, Anthropic's `error.message` under `type: error`). */
function errorMessage(body: Buffer): string | undefined {
  try {
    const v = JSON.parse(body.toString('utf8'));
    const m = v?.error?.message ?? v?.message;
    return typeof m === 'string' ? m : undefined;
  } catch {
    return undefined;
  }
}

function build(client: Endpoint, upstream: Endpoint, from: ClientFormat, to: ProviderFormat): Translation {
  const anthropicClient = client === 'messages';
  return {
    client,
    upstream,
    request: (doc) => to.fromChat(from.toChat(doc)),
    response: (body, ctx) => Buffer.from(JSON.stringify(from.fromChatResponse(to.toChatResponse(JSON.parse(body.toString('utf8'))), ctx))),
    error: (status, body) => Buffer.from(proxyErrorBody(anthropicClient, status, errorMessage(body) ?? `The upstream provider answered ${status}`)),
    stream: (ctx) => new Translator(to.decoder(), from.encoder(ctx)),
  };
}

class Translator implements StreamTranslator {
  private readonly reader = new SseReader();

  constructor(private readonly decoder: StreamDecoder, private readonly encoder: StreamEncoder) {}

  private translate(events: ReturnType<SseReader['push']>): string {
    let out = '';
    for (const e of events) for (const item of this.decoder.push(e)) out += writeEvents(this.encoder.push(item));
    return out;
  }

  push(bytes: Uint8Array): Buffer {
    return Buffer.from(this.translate(this.reader.push(bytes)));
  }

  end(): Buffer {
    return Buffer.from(this.translate(this.reader.end()) + writeEvents(this.encoder.end()));
  }
}
