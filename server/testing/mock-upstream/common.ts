import type { IncomingMessage, ServerResponse } from 'node:http';

/** How the mock answers the requests made with one upstream credential. */
export interface Behaviour {
  /** Answer this status with an error body in the provider's format. */
  status?: number;
  /** Seconds, sent as Retry-After (with status 429). */
  retryAfter?: number;
  /** Apply this behaviour to the next N requests only, then behave normally. */
  times?: number;
  /** Wait this long before the response headers. */
  delayMs?: number;
  /** Content chunks in a stream (default 3). */
  chunks?: number;
  /** Delay between SSE content chunks. */
  chunkDelayMs?: number;
  /** Streaming: destroy the socket after N content chunks (no terminating event). */
  cutAfterChunks?: number;
  /** Streaming: stop sending after N content chunks but keep the socket open. */
  stallAfterChunks?: number;
  /** Close the connection without answering, as an upstream closing an idle kept connection just as the request arrives. */
  dropConnection?: boolean;
  /** Accept the request and never answer (a black hole): the socket stays open until the client gives up. */
  blackHole?: boolean;
  /** Milliseconds, sent as `retry-after-ms` (with status 429), as OpenAI does. */
  retryAfterMs?: number;
  /** The behaviour holds until this time (Date.now() ms); later requests are answered normally. */
  activeUntil?: number;
  /** Flapping: the behaviour holds in every other period of this length (from when it was set), normal answers between. */
  flapMs?: number;
  /** The behaviour holds only for requests for these models (an upstream failing one model). */
  onlyModels?: string[];
  /** Streaming: with stallAfterChunks, resume after this long instead of never. */
  stallMs?: number;
  /** Streaming (chat): end the stream cleanly after the last chunk (usage included) without `data: [DONE]`. */
  omitDone?: boolean;
  /**
   * Usage to report. `prompt_tokens` includes `cached_tokens` (OpenAI's meaning); the Anthropic
   * format reports them as `input_tokens = prompt_tokens - cached_tokens` plus `cache_read_input_tokens`.
   * `reasoning_tokens` is part of `completion_tokens` (Anthropic: `output_tokens_details.thinking_tokens`).
   */
  usage?: Usage;
  /** The assistant text (split across chunks when streaming). */
  text?: string;
  /**
   * An error answer (`status`) whose message echoes what the request carried: its credential
   * (as sent, URL-encoded, base64), its Authorization header and the URL it reached (this host).
   */
  echoCredentials?: boolean;
  /** Streaming: after N content chunks, this frame (an upstream's error event), then the end of the stream. */
  streamError?: { afterChunks: number } & Frame;
  /**
   * A tool call to answer with when the request offers tools and its last turn is not a tool
   * result (Anthropic `tool_use`, OpenAI `tool_calls`); after a tool result the text answer comes.
   */
  toolCall?: { name: string; arguments: Record<string, unknown> };
  /**
   * The model's thinking, answered when the request asks for it: Anthropic's signed thinking
   * block (with `thinking.type: "enabled"`), or `reasoning_content` on chat completions (with
   * `reasoning_effort`, as reasoning providers send it).
   */
  thinking?: string;
  /**
   * A web search run before the answer when the request offers Anthropic's web search tool
   * (server_tool_use and web_search_tool_result blocks, counted in usage.server_tool_use).
   */
  webSearch?: { query: string; results: { url: string; title: string }[] };
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  reasoning_tokens?: number;
  cached_tokens?: number;
  /** Input tokens written to the cache (Anthropic's cache_creation_input_tokens), part of prompt_tokens. */
  cache_write_tokens?: number;
  /** Of cache_write_tokens, the ones kept an hour (Anthropic's cache_creation.ephemeral_1h_input_tokens). */
  cache_write_1h_tokens?: number;
  /** Audio input and output tokens (OpenAI chat's *_tokens_details.audio_tokens), parts of prompt_tokens and completion_tokens. */
  audio_tokens?: number;
  audio_output_tokens?: number;
}

/** The answer text cut at the first stop sequence it contains, and which one (null when none). */
export function stopAt(text: string, stops: unknown): { text: string; stop: string | null } {
  const list = typeof stops === 'string' ? [stops] : Array.isArray(stops) ? stops.filter((x): x is string => typeof x === 'string' && x !== '') : [];
  let cut = -1;
  let stop: string | null = null;
  for (const s of list) {
    const i = text.indexOf(s);
    if (i !== -1 && (cut === -1 || i < cut)) { cut = i; stop = s; }
  }
  return cut === -1 ? { text, stop: null } : { text: text.slice(0, cut), stop };
}

/** One SSE frame: `event:` line (optional) and its JSON (or literal) data. */
export interface Frame {
  event?: string;
  data: unknown;
}

/** A streamed answer: frames before the content, the content chunks, frames after. */
export interface StreamScript {
  head: Frame[];
  content: Frame[];
  tail: Frame[];
}

/** The mock's deterministic token estimate: a quarter of the characters, at least 1. */
export function estimateTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

/** The text of OpenAI/Anthropic/Responses message content (a string or an array of text parts). */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((p) => (p && typeof p === 'object' && typeof (p as { text?: unknown }).text === 'string' ? (p as { text: string }).text : '')).join('');
}

export function messagesText(messages: unknown): string {
  if (!Array.isArray(messages)) return typeof messages === 'string' ? messages : '';
  return messages.map((m) => (m && typeof m === 'object' ? contentText((m as { content?: unknown }).content) : '')).join('\n');
}

/** The usage to report: the behaviour's, else derived from the prompt and answer lengths. */
export function usageFor(b: Behaviour, promptText: string, answer: string): Usage {
  return b.usage ?? { prompt_tokens: estimateTokens(promptText), completion_tokens: estimateTokens(answer) };
}

export function answerText(b: Behaviour, model: string): string {
  return b.text ?? `This is a mock answer from ${model}.`;
}

/** Splits text into `n` contiguous pieces (fewer when the text is shorter); joined they give the text back. */
export function splitText(text: string, n: number): string[] {
  const count = Math.max(1, Math.min(Math.floor(n), text.length || 1));
  const out: string[] = [];
  const size = text.length / count;
  for (let i = 0; i < count; i++) out.push(text.slice(Math.round(i * size), Math.round((i + 1) * size)));
  return out;
}

let counter = 0;
/** Unique, readable IDs in the providers' styles (`chatcmpl-…`, `msg_…`, `resp_…`). */
export function mockId(prefix: string): string {
  counter += 1;
  return `${prefix}${Date.now().toString(36)}${counter.toString(36).padStart(4, '0')}`;
}

export const nowSeconds = () => Math.floor(Date.now() / 1000);

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.destroyed || res.writableEnded) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

function writeFrame(res: ServerResponse, f: Frame): Promise<void> {
  const data = typeof f.data === 'string' ? f.data : JSON.stringify(f.data);
  const text = `${f.event ? `event: ${f.event}\n` : ''}data: ${data}\n\n`;
  return new Promise((resolve) => {
    if (res.destroyed) return resolve();
    res.write(text, () => resolve());
  });
}

/**
 * Plays a stream script with the behaviour's pacing and failures. A cut destroys the socket
 * once the chunks before it have reached the kernel, so the client sees them and then an error;
 * a stall leaves the response open (the server's close() ends it).
 */
export async function playStream(req: IncomingMessage, res: ServerResponse, b: Behaviour, script: StreamScript): Promise<void> {
  let gone = false;
  res.on('close', () => (gone = true));
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  res.flushHeaders();
  for (const f of script.head) await writeFrame(res, f);
  const delay = b.chunkDelayMs ?? 0;
  const stopAt = (n: number) => {
    if (b.cutAfterChunks !== undefined && n >= b.cutAfterChunks) {
      req.socket.destroy();
      return true;
    }
    return b.stallAfterChunks !== undefined && n >= b.stallAfterChunks;
  };
  // A stall with stallMs pauses and goes on; without it the stream stays silent for good.
  const stall = async (n: number) => {
    if (!stopAt(n)) return false;
    if (b.stallMs === undefined || b.cutAfterChunks !== undefined && n >= b.cutAfterChunks) return true;
    await sleep(b.stallMs);
    return gone;
  };
  if (await stall(0)) return;
  for (let i = 0; i < script.content.length; i++) {
    if (i > 0 && delay > 0) await sleep(delay);
    if (gone) return;
    await writeFrame(res, script.content[i]);
    if (await stall(i + 1)) return;
    if (b.streamError && i + 1 >= b.streamError.afterChunks) {
      await writeFrame(res, b.streamError);
      if (!gone) res.end();
      return;
    }
  }
  if (delay > 0) await sleep(delay);
  for (const f of script.tail) {
    if (gone) return;
    await writeFrame(res, f);
  }
  if (!gone) res.end();
}
