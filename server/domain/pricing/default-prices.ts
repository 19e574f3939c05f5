/**
 * Default prices in USD per million tokens, from the providers' public price pages
 * (https://openai.com/api/pricing, https://www.anthropic.com/pricing#api,
 * https://ai.google.dev/gemini-api/docs/pricing), as of 2026. PRICING overrides them per Owner.
 * Fields follow the reference layout: InputText, CachedText (cache read), CacheWrite,
 * OutputText, ReasonText (reasoning tokens; billed as output where absent).
 */
export interface ChatPrice {
  InputText: number;
  OutputText: number;
  CachedText?: number;
  CacheWrite?: number;
  ReasonText?: number;
  Rates?: number;
}

export const DEFAULT_CHAT_PRICES: Record<string, ChatPrice> = {
  // OpenAI
  'gpt-4o': { InputText: 2.5, CachedText: 1.25, OutputText: 10 },
  'gpt-4o-mini': { InputText: 0.15, CachedText: 0.075, OutputText: 0.6 },
  'gpt-4.1': { InputText: 2, CachedText: 0.5, OutputText: 8 },
  'gpt-4.1-mini': { InputText: 0.4, CachedText: 0.1, OutputText: 1.6 },
  'gpt-4.1-nano': { InputText: 0.1, CachedText: 0.025, OutputText: 0.4 },
  'gpt-5': { InputText: 1.25, CachedText: 0.125, OutputText: 10 },
  'gpt-5-mini': { InputText: 0.25, CachedText: 0.025, OutputText: 2 },
  'gpt-5-nano': { InputText: 0.05, CachedText: 0.005, OutputText: 0.4 },
  'o3': { InputText: 2, CachedText: 0.5, OutputText: 8 },
  'o4-mini': { InputText: 1.1, CachedText: 0.275, OutputText: 4.4 },
  'text-embedding-3-small': { InputText: 0.02, OutputText: 0 },
  'text-embedding-3-large': { InputText: 0.13, OutputText: 0 },
  // Anthropic (cache write = 1.25× input, cache read = 0.1× input)
  'claude-opus-4-1': { InputText: 15, CacheWrite: 18.75, CachedText: 1.5, OutputText: 75 },
  'claude-sonnet-4-5': { InputText: 3, CacheWrite: 3.75, CachedText: 0.3, OutputText: 15 },
  'claude-sonnet-4': { InputText: 3, CacheWrite: 3.75, CachedText: 0.3, OutputText: 15 },
  'claude-haiku-4-5': { InputText: 1, CacheWrite: 1.25, CachedText: 0.1, OutputText: 5 },
  'claude-3-5-haiku': { InputText: 0.8, CacheWrite: 1, CachedText: 0.08, OutputText: 4 },
  // Google (prices for prompts up to 200k tokens)
  'gemini-2.5-pro': { InputText: 1.25, CachedText: 0.31, OutputText: 10 },
  'gemini-2.5-flash': { InputText: 0.3, CachedText: 0.075, OutputText: 2.5 },
  'gemini-2.5-flash-lite': { InputText: 0.1, CachedText: 0.025, OutputText: 0.4 },
  'text-embedding-004': { InputText: 0, OutputText: 0 },
};
