import type { TokenUsage } from '../../domain/pricing/cost';
import type { WireFormat } from '../providers/types';
import { usageOfMetadata } from '../formats/gemini';
import { hourCacheWrites, usageOfConverse } from '../formats/converse';

const int = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0);

/**
 * A provider's usage object in our terms. OpenAI chat and embeddings: prompt_tokens (cached and
 * audio included), completion_tokens (reasoning and audio included), their *_details saying how
 * many of each. OpenAI responses: input_tokens, output_tokens with *_details. Anthropic:
 * input_tokens excludes cache reads and writes, so the prompt is their sum; cache_creation
 * splits the writes by lifetime. Audio and image counts are read wherever a format reports them.
 */
export function normalizeUsage(u: unknown, format: WireFormat): TokenUsage | null {
  if (typeof u !== 'object' || u === null) return null;
  const o = u as Record<string, any>;
  if (format === 'gemini') {
    // usageMetadata: the prompt holds the cached tokens, thoughts are output (formats/gemini.ts reads it).
    const c = usageOfMetadata(o);
    return openaiUsage(c.prompt_tokens, c.completion_tokens, c.prompt_tokens_details, c.completion_tokens_details);
  }
  if (format === 'converse') {
    // Bedrock's TokenUsage (a whole answer's `usage`, a stream's `metadata` event): formats/converse.ts reads it.
    if (!('inputTokens' in o) && !('outputTokens' in o)) return null;
    const c = usageOfConverse(o);
    return withClasses(openaiUsage(c.prompt_tokens, c.completion_tokens, c.prompt_tokens_details, c.completion_tokens_details), { cacheWrite1h: hourCacheWrites(o) });
  }
  if (format === 'anthropic') {
    const cached = int(o.cache_read_input_tokens);
    const cacheWrite = int(o.cache_creation_input_tokens);
    // Thinking is part of output_tokens; output_tokens_details, when sent, says how much.
    return withClasses(
      { prompt: int(o.input_tokens) + cached + cacheWrite, completion: int(o.output_tokens), reasoning: int(o.output_tokens_details?.thinking_tokens), cached, cacheWrite },
      { cacheWrite1h: int(o.cache_creation?.ephemeral_1h_input_tokens), webSearches: int(o.server_tool_use?.web_search_requests) },
    );
  }
  if ('prompt_tokens' in o || 'completion_tokens' in o) return openaiUsage(o.prompt_tokens, o.completion_tokens, o.prompt_tokens_details, o.completion_tokens_details);
  if ('input_tokens' in o || 'output_tokens' in o) return openaiUsage(o.input_tokens, o.output_tokens, o.input_tokens_details, o.output_tokens_details);
  return null;
}

/** OpenAI's usage, chat's or Responses' names: the totals and their details. */
function openaiUsage(prompt: unknown, completion: unknown, inD: Record<string, unknown> | undefined, outD: Record<string, unknown> | undefined): TokenUsage {
  return withClasses(
    { prompt: int(prompt), completion: int(completion), reasoning: int(outD?.reasoning_tokens), cached: int(inD?.cached_tokens), cacheWrite: int(inD?.cache_write_tokens) },
    { audioIn: int(inD?.audio_tokens), imageIn: int(inD?.image_tokens), audioOut: int(outD?.audio_tokens), imageOut: int(outD?.image_tokens) },
  );
}

/** The optional classes the answer reported any of, added to `u`: a usage without them reads as it always did. */
function withClasses(u: TokenUsage, classes: Partial<TokenUsage>): TokenUsage {
  for (const k of Object.keys(classes) as (keyof TokenUsage)[]) if (classes[k]) u[k] = classes[k]!;
  return u;
}

/** Each class at the larger of two reports of one answer (Anthropic's message_start carries the input side, message_delta the output). */
export function largerOfEach(a: TokenUsage, b: TokenUsage): TokenUsage {
  const out = { ...a };
  for (const k of Object.keys(b) as (keyof TokenUsage)[]) out[k] = Math.max(a[k] ?? 0, b[k] ?? 0);
  return out;
}

const USAGE_KEY = Buffer.from('"usage"');
/** Gemini's name for it. */
export const USAGE_METADATA_KEY = Buffer.from('"usageMetadata"');
/** The usage object's name in a wire format's answers. */
export const usageKeyOf = (format: WireFormat) => (format === 'gemini' ? USAGE_METADATA_KEY : USAGE_KEY);

/** Index of the `{` that opens a `"usage": {` object (or another `key`'s) at or after `from`, or -1. */
export function findUsageObject(buf: Buffer, from = 0, last = false, key = USAGE_KEY): number {
  let i = last ? buf.lastIndexOf(key) : buf.indexOf(key, from);
  while (i !== -1) {
    let j = i + key.length;
    while (j < buf.length && (buf[j] === 0x20 || buf[j] === 0x0a || buf[j] === 0x0d || buf[j] === 0x09)) j++;
    if (buf[j] === 0x3a /* : */) {
      j++;
      while (j < buf.length && (buf[j] === 0x20 || buf[j] === 0x0a || buf[j] === 0x0d || buf[j] === 0x09)) j++;
      if (buf[j] === 0x7b /* { */) return j;
    }
    i = last ? (i === 0 ? -1 : buf.lastIndexOf(key, i - 1)) : buf.indexOf(key, i + 1);
  }
  return -1;
}

/** The JSON object starting at `start` (a `{`), found by matching braces outside strings. */
export function sliceObject(buf: Buffer, start: number): Buffer | null {
  let depth = 0;
  let inString = false;
  for (let i = start; i < buf.length; i++) {
    const c = buf[i];
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b) depth++;
    else if (c === 0x7d /* } */ && --depth === 0) return buf.subarray(start, i + 1);
  }
  return null;
}

/**
 * Usage of a whole (non-streamed) answer. The usage object sits at the end of the answer
 * (`"usage"` in that exact form cannot occur inside a JSON string), so only it is parsed,
 * not the whole body; a full parse is the fallback.
 */
export function usageFromBody(body: Buffer, format: WireFormat): TokenUsage | null {
  const at = findUsageObject(body, 0, true, usageKeyOf(format));
  if (at !== -1) {
    const obj = sliceObject(body, at);
    if (obj) {
      try {
        const u = normalizeUsage(JSON.parse(obj.toString('utf8')), format);
        // A Converse answer's last `"usage"` object may be a tool's input: its own has token counts.
        if (u || format !== 'converse') return u;
      } catch { /* fall back */ }
    }
  }
  try {
    const doc = JSON.parse(body.toString('utf8'));
    return normalizeUsage(doc?.usage ?? doc?.response?.usage ?? doc?.usageMetadata, format);
  } catch {
    return null;
  }
}

/**
 * What a cut stream is billed for when its usage never arrived: the prompt estimated at four
 * bytes of request per token, the completion at one token per delivered event.
 */
export function estimateUsage(partial: TokenUsage | null, requestBytes: number, deliveredEvents: number): TokenUsage {
  // The classes the partial usage reported (Anthropic's message_start: cache reads and writes) are kept.
  return {
    reasoning: 0,
    cached: 0,
    cacheWrite: 0,
    ...partial,
    prompt: partial?.prompt || Math.ceil(requestBytes / 4),
    completion: Math.max(partial?.completion ?? 0, deliveredEvents),
  };
}

/**
 * What a whole answer is billed for when the upstream sent no usage (some OpenAI-compatible
 * providers leave it out): the prompt at four bytes of request per token, the completion at
 * four bytes of answer per token. A served call is never free for want of a usage field.
 */
export function estimateWholeUsage(requestBytes: number, answerBytes: number): TokenUsage {
  return { prompt: Math.ceil(requestBytes / 4), completion: Math.ceil(answerBytes / 4), reasoning: 0, cached: 0, cacheWrite: 0 };
}

export const totalTokens = (u: TokenUsage) => u.prompt + u.completion;
