import { DEFAULT_CHAT_PRICES, type ChatPrice } from './default-prices';
import type { PricingOverrides } from './overrides';

/** Token counts of one answer, as the usage parsers normalize them. */
export interface TokenUsage {
  /** All input tokens, cached and cache-written ones included. */
  prompt: number;
  /** All output tokens, reasoning ones included. */
  completion: number;
  reasoning: number;
  /** Input tokens read from the provider's cache. */
  cached: number;
  /** Input tokens written to the provider's cache (Anthropic's cache_creation_input_tokens). */
  cacheWrite: number;
}

export interface ResolvedPrice {
  InputText: number;
  OutputText: number;
  CachedText: number;
  CacheWrite: number;
  ReasonText: number;
  /** Per-model multiplier from PRICING (default 1). */
  Rates: number;
  /** False when neither the defaults nor PRICING know the model: it costs nothing. */
  known: boolean;
}

const defaultByModel = new Map<string, ChatPrice | null>();

/**
 * The default price of a model, also for dated or suffixed variants: `gpt-4o-2024-08-06`
 * takes `gpt-4o`'s, `claude-sonnet-4-5-20250929` takes `claude-sonnet-4-5`'s (longest known
 * prefix followed by `-`). A provider prefix such as `google/` is ignored.
 */
export function defaultPrice(model: string): ChatPrice | null {
  const cached = defaultByModel.get(model);
  if (cached !== undefined) return cached;
  const bare = model.includes('/') ? model.slice(model.lastIndexOf('/') + 1) : model;
  let found: ChatPrice | null = DEFAULT_CHAT_PRICES[bare] ?? null;
  if (!found) {
    let best = '';
    for (const name of Object.keys(DEFAULT_CHAT_PRICES)) {
      if (name.length > best.length && bare.startsWith(name + '-')) best = name;
    }
    if (best) found = DEFAULT_CHAT_PRICES[best];
  }
  if (defaultByModel.size < 10_000) defaultByModel.set(model, found);
  return found;
}

/** Default price overridden field by field by the Owner's `PRICING.ChatPricing.<model>`. */
export function resolvePrice(model: string, pricing: PricingOverrides): ResolvedPrice {
  const base = defaultPrice(model);
  const o = pricing.ChatPricing?.[model];
  const input = o?.InputText ?? base?.InputText ?? 0;
  const output = o?.OutputText ?? base?.OutputText ?? 0;
  return {
    InputText: input,
    OutputText: output,
    CachedText: o?.CachedText ?? base?.CachedText ?? input,
    CacheWrite: o?.CacheWrite ?? base?.CacheWrite ?? input,
    ReasonText: o?.ReasonText ?? base?.ReasonText ?? output,
    Rates: o?.Rates ?? base?.Rates ?? 1,
    known: base !== null || o !== undefined,
  };
}

/**
 * Cost in USD credits: tokens × price per million tokens × the model's Rates × the account's
 * Rates × its Factor. Cached input is billed at CachedText, cache writes at CacheWrite, the
 * rest of the input at InputText; reasoning tokens at ReasonText, the rest of the output at
 * OutputText.
 */
export function costOf(usage: TokenUsage, price: ResolvedPrice, accountRates: number, factor: number): number {
  const cached = Math.min(usage.cached, usage.prompt);
  const cacheWrite = Math.min(usage.cacheWrite, usage.prompt - cached);
  const plainInput = usage.prompt - cached - cacheWrite;
  const reasoning = Math.min(usage.reasoning, usage.completion);
  const plainOutput = usage.completion - reasoning;
  const base = plainInput * price.InputText + cached * price.CachedText + cacheWrite * price.CacheWrite
    + plainOutput * price.OutputText + reasoning * price.ReasonText;
  const cost = (base / 1_000_000) * price.Rates * accountRates * factor;
  return Number.isFinite(cost) && cost > 0 ? cost : 0;
}

const resolvedByPricing = new WeakMap<PricingOverrides, Map<string, ResolvedPrice>>();

/**
 * `resolvePrice`, memoized per PRICING object: the config store builds a new object on every
 * change, so a saved PRICING takes effect on the next request without any invalidation.
 */
export function priceFor(model: string, pricing: PricingOverrides): ResolvedPrice {
  let byModel = resolvedByPricing.get(pricing);
  if (!byModel) resolvedByPricing.set(pricing, (byModel = new Map()));
  let p = byModel.get(model);
  if (!p) {
    p = resolvePrice(model, pricing);
    if (byModel.size < 10_000) byModel.set(model, p);
  }
  return p;
}
