import type { ResolvedPrice } from './cost';

/**
 * What admission reserves for a request before it goes upstream: its input tokens estimated
 * from the request without a tokenizer, its output at most what the client allows, and the
 * most that can cost. Overestimating only holds credit a little longer (settle returns it);
 * underestimating is billed anyway (the ledger's overdraft), so the estimate errs high.
 */

/**
 * Output reserved when the request sets no max_tokens / max_output_tokens /
 * max_completion_tokens: embeddings produce none; reasoning models (o-series, gpt-5) often
 * spend thousands of hidden tokens, so 16,384; everything else 4,096 (the common default
 * completion cap of chat APIs).
 */
export const DEFAULT_OUTPUT_TOKENS = 4096;
export const DEFAULT_REASONING_OUTPUT_TOKENS = 16_384;

const REASONING = /^(?:.*\/)?(?:o\d|gpt-5)/;

export function defaultOutputTokens(model: string, embeddings: boolean): number {
  if (embeddings) return 0;
  return REASONING.test(model) ? DEFAULT_REASONING_OUTPUT_TOKENS : DEFAULT_OUTPUT_TOKENS;
}

/** An image or other inline binary part, reserved as this many tokens whatever its size. */
export const BINARY_PART_TOKENS = 1500;
/** Strings longer than this without a space are taken for base64 payloads, not text. */
const PAYLOAD_MIN_CHARS = 4096;

/**
 * Input tokens of a request: characters of its text ÷ 3 (English runs about 4 characters a
 * token; ÷ 3 leaves room for code and other languages), inline images and base64 payloads at
 * BINARY_PART_TOKENS each. Walks the parsed JSON once; no tokenizer on the hot path.
 */
export function estimateInputTokens(doc: Record<string, unknown>): number {
  let chars = 0;
  let binary = 0;
  const stack: unknown[] = [doc];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (v.startsWith('data:') || (v.length >= PAYLOAD_MIN_CHARS && !v.includes(' '))) binary++;
      else chars += v.length;
    } else if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) stack.push(v[i]);
    } else if (v !== null && typeof v === 'object') {
      for (const k in v as Record<string, unknown>) stack.push((v as Record<string, unknown>)[k]);
    }
  }
  return Math.ceil(chars / 3) + binary * BINARY_PART_TOKENS;
}

const positiveInt = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.ceil(v) : undefined);

/** The output the request allows: max_tokens, max_output_tokens or max_completion_tokens, else the model's default. */
export function maxOutputTokens(doc: Record<string, unknown>, model: string, embeddings: boolean): number {
  if (embeddings) return 0;
  return positiveInt(doc.max_completion_tokens) ?? positiveInt(doc.max_output_tokens) ?? positiveInt(doc.max_tokens) ?? defaultOutputTokens(model, embeddings);
}

/**
 * The most `input` + `output` tokens can cost: input at the dearest input price (plain or
 * cache write), output at the dearest output price (plain or reasoning), × Rates × Factor.
 */
export function maxCostOf(input: number, output: number, price: ResolvedPrice, accountRates: number, factor: number): number {
  const inPrice = Math.max(price.InputText, price.CacheWrite);
  const outPrice = Math.max(price.OutputText, price.ReasonText);
  const cost = ((input * inPrice + output * outPrice) / 1_000_000) * price.Rates * accountRates * factor;
  return Number.isFinite(cost) && cost > 0 ? cost : 0;
}
