import { MapperError } from '../mapping/mappers';
import { catalogueModel } from './catalogue';
import { priceAt, type ResolvedPrice } from './cost';

/**
 * What admission reserves for a request before it goes upstream: the most it can cost. Input
 * is bounded without a tokenizer (bytes, below), output by the request's limit or the model's
 * own. A reservation that holds is what keeps an account from spending past its floor however
 * many calls run at once (docs/decisions.md, "Reservations"); an overestimate only holds credit
 * until settle gives it back.
 */

/**
 * Output reserved for a model the catalogue gives no output limit, when the request sets
 * none and the Owner's DEFAULT_OUTPUT_LIMIT does not say otherwise: 128 Ki covers every
 * output limit of the makers' own models in the catalogue (gpt-5's 128,000, Claude's 64,000).
 */
export const DEFAULT_OUTPUT_LIMIT = 131_072;

/**
 * The output limit a translation sends where the target API requires one (Anthropic's
 * max_tokens) and the client gave none, and the most output a token limit (TPM, …) counts
 * for a call that names no limit; a credit reservation never assumes it.
 */
export const DEFAULT_OUTPUT_TOKENS = 4096;

/**
 * An image part, whatever its size: providers scale images down to a bounded number of tiles
 * or patches (Claude about 1,600 tokens, Gemini at most 2,240, OpenAI's patch models a few
 * thousand). gpt-4o-mini counts 33 times gpt-4o's image tokens: 25,501 for its largest image.
 */
export const IMAGE_TOKENS = 12_000;
export const IMAGE_TOKENS_GPT_4O_MINI = 25_501;
/** A file or document referred to by id or URL, when the model's context window is unknown. */
export const FILE_REFERENCE_TOKENS = 200_000;
/** The system prompt providers add when a request carries tools (Anthropic's is about 350 tokens). */
export const TOOLS_TOKENS = 1024;

/** A string under one of these keys, this long or longer, is a base64 payload (Anthropic's `source.data`, `input_audio.data`, `file_data`). */
const PAYLOAD_KEYS = new Set(['data', 'file_data']);
const PAYLOAD_MIN_CHARS = 256;
const IMAGE_PARTS = new Set(['image_url', 'input_image', 'image']);
const FILE_PARTS = new Set(['file', 'input_file', 'document', 'input_audio']);
const FILE_REFERENCE_KEYS = new Set(['file_id', 'file_url', 'url']);

const NONE = 0;
const IMAGE = 1;
const FILE = 2;

/**
 * Input tokens a request can cost at most. Text: its UTF-8 bytes, because byte-level BPE
 * tokenizers (OpenAI's, Anthropic's, Llama's) and SentencePiece with byte fallback (Gemini's)
 * never make more tokens than bytes, in any script; the request's JSON bytes (`raw`) count
 * every string with its keys and punctuation, which also covers the chat template's few tokens
 * per message. Base64 payloads are taken out of that count and charged by what they are:
 * an image at IMAGE_TOKENS, an inline file or audio at its decoded bytes, a file by reference
 * at the context window. Tools add TOOLS_TOKENS. Nothing exceeds the model's context window.
 * Walks the parsed JSON once (its nodes, not its characters). When this bound alone would
 * refuse a call, admission counts the text with the model's tokenizer (token-count.ts, over
 * `inputText` below); no tokenizer is loaded or run here.
 */
export function estimateInputTokens(doc: Record<string, unknown>, raw?: Uint8Array, model = '', context: number | null = null): number {
  const bytes = raw ? raw.length : Buffer.byteLength(JSON.stringify(doc), 'utf8');
  walkInput(doc, model, context, null);
  const tokens = Math.max(bytes - walked.payloadChars, 0) + walked.extra;
  return context !== null && tokens > context ? context : tokens;
}

/** A request's text for a tokenizer, and what its other parts are charged (as estimateInputTokens charges them). */
export interface InputText {
  /** Every string of the request that is not a payload: keys, values, numbers and booleans as written. */
  texts: string[];
  /** Objects and arrays: the structure a provider renders around the text. */
  nodes: number;
  /** Tokens of the parts that are not text (images, inline files and audio, files by reference) and TOOLS_TOKENS. */
  extra: number;
}

/** The request's text and non-text charges, by the same walk and the same payload rules as estimateInputTokens. */
export function inputText(doc: Record<string, unknown>, model = '', context: number | null = null): InputText {
  const texts: string[] = [];
  walkInput(doc, model, context, texts);
  return { texts, nodes: walked.nodes, extra: walked.extra };
}

/** What walkInput found; the walk is synchronous, so one object serves every call without allocating. */
const walked = { payloadChars: 0, extra: 0, nodes: 0 };

/**
 * The one walk over a request's parsed JSON: base64 payloads found and charged by what they
 * are (into `walked`), and, when `texts` is given, every other string collected and the
 * objects and arrays counted. Without `texts` (the byte bound) no string is touched but the
 * payload candidates.
 */
function walkInput(doc: Record<string, unknown>, model: string, context: number | null, texts: string[] | null): void {
  let payloadChars = 0;
  let nodes = 0;
  let extra = Array.isArray(doc.tools) && doc.tools.length > 0 ? TOOLS_TOKENS : 0;
  const imageTokens = model.includes('gpt-4o-mini') ? IMAGE_TOKENS_GPT_4O_MINI : IMAGE_TOKENS;
  const values: unknown[] = [doc];
  const kinds: number[] = [NONE];
  while (values.length > 0) {
    const v = values.pop();
    const kind = kinds.pop()!;
    if (Array.isArray(v)) {
      if (texts !== null) nodes++;
      for (let i = 0; i < v.length; i++) {
        const x = v[i];
        if (x !== null && typeof x === 'object') { values.push(x); kinds.push(kind); } else if (typeof x === 'string' && x.length >= PAYLOAD_MIN_CHARS && isDataUrl(x)) {
          payloadChars += x.length;
          extra += kind === IMAGE ? 0 : Math.ceil(x.length * 0.75);
        } else if (texts !== null && x !== null && x !== undefined) texts.push(String(x));
      }
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    if (texts !== null) nodes++;
    const o = v as Record<string, unknown>;
    let inner = kind;
    const type = o.type;
    if (typeof type === 'string' && kind === NONE) {
      if (IMAGE_PARTS.has(type)) { inner = IMAGE; extra += imageTokens; } else if (FILE_PARTS.has(type)) inner = FILE;
    }
    let inline = false;
    let reference = false;
    for (const k in o) {
      const x = o[k];
      if (texts !== null) texts.push(k);
      if (typeof x === 'string') {
        if (x.length >= PAYLOAD_MIN_CHARS && (isDataUrl(x) || (PAYLOAD_KEYS.has(k) && looksBase64(x)))) {
          payloadChars += x.length;
          inline = true;
          if (inner !== IMAGE) extra += Math.ceil(x.length * 0.75);
          continue;
        }
        if (inner === FILE && FILE_REFERENCE_KEYS.has(k)) reference = true;
        if (texts !== null) texts.push(x);
      } else if (x !== null && typeof x === 'object') {
        values.push(x);
        kinds.push(inner);
      } else if (texts !== null && x !== null && x !== undefined) texts.push(String(x));
    }
    if (reference && !inline) extra += context ?? FILE_REFERENCE_TOKENS;
  }
  walked.payloadChars = payloadChars;
  walked.extra = extra;
  walked.nodes = nodes;
}

const isDataUrl = (s: string) => s.charCodeAt(0) === 100 && s.startsWith('data:');

/** Base64 by its first characters (a text document under `data` has spaces or non-ASCII letters within them). */
function looksBase64(s: string): boolean {
  for (let i = 0; i < PAYLOAD_MIN_CHARS; i++) {
    const c = s.charCodeAt(i);
    if (!((c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 47 && c <= 57) || c === 43 || c === 61)) return false;
  }
  return true;
}

/** DEFAULT_OUTPUT_LIMIT: a whole number of tokens from 1 to 10,000,000; empty means DEFAULT_OUTPUT_LIMIT. */
export function parseOutputLimit(raw: string, field = 'DEFAULT_OUTPUT_LIMIT'): number {
  const v = raw.trim();
  if (v === '') return DEFAULT_OUTPUT_LIMIT;
  if (!/^\d{1,8}$/.test(v) || Number(v) < 1 || Number(v) > 10_000_000) {
    throw new MapperError(`${field}: must be a whole number of tokens from 1 to 10000000 (output reserved for a model the catalogue gives no output limit; default ${DEFAULT_OUTPUT_LIMIT})`);
  }
  return Number(v);
}

const positiveInt = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.ceil(v) : undefined);

/** A model's output and context limits from the catalogue; `fallback` (DEFAULT_OUTPUT_LIMIT) when it gives no output limit, never above the context window. */
export function modelLimits(model: string, fallback: number): { output: number; context: number | null } {
  const m = catalogueModel(model);
  const context = m?.contextLimit ?? null;
  const output = m?.outputLimit ?? (context !== null ? Math.min(fallback, context) : fallback);
  return { output, context };
}

/**
 * The output a request allows: its own limit (max_completion_tokens, max_output_tokens for
 * Responses, max_tokens, Anthropic's max_tokens, Gemini's generationConfig.maxOutputTokens), else the model's `limit`; times the
 * completions asked for (`n`, `best_of`). Embeddings produce none.
 */
export function maxOutputTokens(doc: Record<string, unknown>, limit: number, embeddings: boolean): number {
  if (embeddings) return 0;
  const gemini = doc.generationConfig as { maxOutputTokens?: unknown } | undefined;
  const each = positiveInt(doc.max_completion_tokens) ?? positiveInt(doc.max_output_tokens) ?? positiveInt(doc.max_tokens) ?? positiveInt(gemini?.maxOutputTokens) ?? limit;
  const n = Math.max(positiveInt(doc.n) ?? 1, positiveInt(doc.best_of) ?? 1);
  return each * n;
}

/**
 * The dearest price of an input token and of an output token of any class costOf bills (a
 * one-hour cache write, audio, an image; reasoning, audio or image output), USD per token,
 * × Rates × Factor: the usage parsers bill each class at its own price, and a request's bytes
 * do not say which classes the provider will report.
 */
function unitPrices(input: number, price: ResolvedPrice, accountRates: number, factor: number) {
  const p = priceAt(price, input);
  const scale = (p.Rates * accountRates * factor) / 1_000_000;
  return {
    input: Math.max(p.InputText, p.CachedText, p.CacheWrite, p.CacheWrite1h, p.InputAudio, p.CachedAudio, p.InputImage) * scale,
    output: Math.max(p.OutputText, p.ReasonText, p.OutputAudio, p.OutputImage) * scale,
  };
}

/**
 * The most `input` + `output` tokens can cost: each at the dearest price of its side (above),
 * at the long-context tier the input may reach, × Rates × Factor.
 */
export function maxCostOf(input: number, output: number, price: ResolvedPrice, accountRates: number, factor: number): number {
  const u = unitPrices(input, price, accountRates, factor);
  const cost = input * u.input + output * u.output;
  return Number.isFinite(cost) && cost > 0 ? cost : 0;
}

/**
 * The largest output limit whose maximum cost fits `budget` with this input (0 when even the
 * input alone does not fit): what a refused client could ask for instead.
 */
export function affordableOutput(budget: number, input: number, price: ResolvedPrice, accountRates: number, factor: number): number {
  const u = unitPrices(input, price, accountRates, factor);
  const left = budget - input * u.input;
  if (!(left > 0)) return 0;
  if (!(u.output > 0)) return Number.MAX_SAFE_INTEGER;
  return Math.floor(left / u.output);
}
