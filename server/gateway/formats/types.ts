/**
 * The canonical form every translation goes through: OpenAI Chat Completions, the one format
 * every client format and every provider kind can be expressed in, plus two fields some
 * OpenAI-compatible providers already use for what Chat Completions cannot say — an assistant
 * message's `reasoning_content` (its thinking as text) and `thinking_blocks` (Anthropic's
 * thinking blocks, signatures kept, so a client can send them back on the next turn). Each
 * other format converts to and from this form (anthropic.ts, responses.ts), so a pair of
 * formats needs no converter of its own: N adapters, not N².
 */

// The wire formats are open-ended JSON: these types name the fields the converters read and
// write, and let the rest through.
export type Json = Record<string, any>;

export interface ThinkingBlock {
  type: 'thinking' | 'redacted_thinking';
  thinking?: string;
  signature?: string;
  data?: string;
}

export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/**
 * A web search the provider ran for the model (Anthropic's server_tool_use and
 * web_search_tool_result blocks), in neutral terms: each client format writes its own item.
 */
export interface WebSearchCall {
  id: string;
  query: string;
  /** The URLs the search found. */
  sources: string[];
  /** The provider reported the search failed (Anthropic's web_search_tool_result_error). */
  failed?: boolean;
}

export interface ChatMessage {
  role: 'system' | 'developer' | 'user' | 'assistant' | 'tool';
  content?: string | Json[] | null;
  tool_calls?: ChatToolCall[];
  tool_call_id?: string;
  reasoning_content?: string;
  thinking_blocks?: ThinkingBlock[];
  /** Searches the provider ran before this answer (an answer only). */
  web_searches?: WebSearchCall[];
  [field: string]: unknown;
}

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  [field: string]: unknown;
}

export interface ChatUsage {
  /** All input tokens, cache reads and writes included. */
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** `cache_write_tokens` is ours: Chat Completions has no cache writes, Anthropic bills them. */
  prompt_tokens_details?: { cached_tokens?: number; cache_write_tokens?: number };
  completion_tokens_details?: { reasoning_tokens?: number };
}

export interface ChatResponse {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: { index: number; message: ChatMessage; finish_reason: string | null }[];
  usage?: ChatUsage;
}

export interface ChunkToolCall {
  index: number;
  id?: string;
  type?: 'function';
  function?: { name?: string; arguments?: string };
}

export interface ChatDelta {
  role?: 'assistant';
  content?: string | null;
  reasoning_content?: string;
  thinking_blocks?: ThinkingBlock[];
  tool_calls?: ChunkToolCall[];
  /** A search the provider ran, once its results arrived. */
  web_search?: WebSearchCall;
}

export interface ChatChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: { index: number; delta: ChatDelta; finish_reason: string | null }[];
  usage?: ChatUsage | null;
}

/** An error the upstream sent inside a stream, in neutral terms: each client format writes its own event. */
export interface StreamFailure {
  error: { message: string; type: string; code?: string };
}

export type StreamItem = ChatChunk | StreamFailure;

export const isFailure = (i: StreamItem): i is StreamFailure => (i as StreamFailure).error !== undefined;

/** One server-sent event: its `event:` name (when there is one) and its `data:` text. */
export interface SseEvent {
  event?: string;
  data: string;
}

/** What a client-side encoder needs to know about the call. */
export interface ClientContext {
  /** The client asked for the usage chunk (`stream_options.include_usage`). */
  includeUsage: boolean;
  /** The request the client sent, for echoing fields (Responses: instructions, tools). */
  request: Json;
  /**
   * The gateway's estimate of the call's input tokens (what it answers count_tokens with), for
   * a stream whose format names them before the provider does: Anthropic's message_start.
   */
  estimateInput?: () => number;
  /** The client reads the stream as one JSON array written as it comes (Gemini's streamGenerateContent without `alt=sse`). */
  jsonArray?: boolean;
  /** Set by the Responses writers once the answer completed: the Response object, which the gateway may keep for previous_response_id. */
  completed?: Json;
}

/**
 * A request this client format cannot express for that provider format (an Anthropic server
 * tool for an OpenAI-format key, an audio part for Anthropic, `previous_response_id` for a key
 * without stored responses): the key is skipped with this reason, and when no key of the Level
 * can serve the call the client gets 400 `unsupported_by_provider` naming it.
 */
export class Untranslatable extends Error {}

const int = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0);

/** Token classes of a canonical usage: prompt includes cached and cache-written tokens. */
export function usageParts(u: ChatUsage | null | undefined) {
  const prompt = int(u?.prompt_tokens);
  const cached = Math.min(int(u?.prompt_tokens_details?.cached_tokens), prompt);
  const cacheWrite = Math.min(int(u?.prompt_tokens_details?.cache_write_tokens), prompt - cached);
  const completion = int(u?.completion_tokens);
  const reasoning = Math.min(int(u?.completion_tokens_details?.reasoning_tokens), completion);
  return { prompt, cached, cacheWrite, completion, reasoning };
}

export function chatUsage(p: { prompt: number; cached: number; cacheWrite: number; completion: number; reasoning: number }): ChatUsage {
  return {
    prompt_tokens: p.prompt,
    completion_tokens: p.completion,
    total_tokens: p.prompt + p.completion,
    prompt_tokens_details: p.cacheWrite ? { cached_tokens: p.cached, cache_write_tokens: p.cacheWrite } : { cached_tokens: p.cached },
    completion_tokens_details: { reasoning_tokens: p.reasoning },
  };
}

/** Text of a content that is a string or a list of text parts (other parts are left out). */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let out = '';
  for (const p of content) if (p && typeof p === 'object' && typeof p.text === 'string') out += p.text;
  return out;
}

export const nowSeconds = () => Math.floor(Date.now() / 1000);

/** `data:<media type>;base64,<data>` split, or null for any other URL. */
export function dataUrl(url: string): { mediaType: string; data: string } | null {
  const m = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  return m ? { mediaType: m[1], data: m[2] } : null;
}

/** A JSON object from a tool call's argument text; anything else is the client's mistake. */
export function parseArguments(text: string | undefined, name: string): Json {
  if (!text) return {};
  try {
    const v = JSON.parse(text);
    if (v && typeof v === 'object' && !Array.isArray(v)) return v;
  } catch { /* reported below */ }
  throw new Untranslatable(`the arguments of tool call ${name} are not a JSON object`);
}
