import { catalogueDay, catalogueModel } from './catalogue';
import { UNCATALOGUED_PRICES, type ChatPrice, type PriceField } from './default-prices';
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

export interface ResolvedPrice extends Record<PriceField, number> {
  /** Per-model multiplier from PRICING (default 1). */
  Rates: number;
  /** False when neither the defaults nor PRICING know the model: it costs nothing. */
  known: boolean;
  /** Long-context prices, ascending: a call whose input exceeds `above` tokens pays `price`. */
  tiers: { above: number; price: ResolvedPrice }[];
}

/**
 * The default price of a model: the catalogue's (dated variants, any letter case, a `provider/`
 * prefix), else the few the catalogue lacks.
 */
export function defaultPrice(model: string): ChatPrice | null {
  const found = catalogueModel(model);
  if (found) return found.price;
  const bare = model.includes('/') ? model.slice(model.lastIndexOf('/') + 1) : model;
  return UNCATALOGUED_PRICES[bare.toLowerCase()] ?? null;
}

type Fields = Partial<Record<PriceField | 'Rates', number>>;

/** Prices field by field: `own` first, then `base`; the cache, reasoning, audio and image units fall back to text. */
function fill(own: Fields | undefined, base: Fields | undefined, known: boolean): ResolvedPrice {
  const f = (k: PriceField | 'Rates') => own?.[k] ?? base?.[k];
  const input = f('InputText') ?? 0;
  const output = f('OutputText') ?? 0;
  return {
    InputText: input,
    OutputText: output,
    CachedText: f('CachedText') ?? input,
    CacheWrite: f('CacheWrite') ?? input,
    ReasonText: f('ReasonText') ?? output,
    InputAudio: f('InputAudio') ?? input,
    CachedAudio: f('CachedAudio') ?? f('InputAudio') ?? input,
    OutputAudio: f('OutputAudio') ?? output,
    InputImage: f('InputImage') ?? input,
    OutputImage: f('OutputImage') ?? output,
    Rates: f('Rates') ?? 1,
    known,
    tiers: [],
  };
}

/** One input and one output price for every unit (UNPRICED_MODEL_POLICY's fallback). */
export const flatPrice = (input: number, output: number, known: boolean): ResolvedPrice => fill({ InputText: input, OutputText: output }, undefined, known);

/**
 * Default price overridden field by field by the Owner's `PRICING.ChatPricing.<model>`. A
 * long-context tier keeps the fields the Owner did not set at the catalogue's tier price; a
 * field the Owner set holds at every length.
 */
export function resolvePrice(model: string, pricing: PricingOverrides): ResolvedPrice {
  const base = defaultPrice(model);
  const o = pricing.ChatPricing?.[model] as Fields | undefined;
  const known = base !== null || o !== undefined;
  const price = fill(o, base ?? undefined, known);
  for (const t of base?.Tiers ?? []) {
    price.tiers.push({ above: t.above, price: fill(o, { ...base, ...t.prices }, known) });
  }
  return price;
}

/** The price a call with `prompt` input tokens pays: its long-context tier, if it reaches one. */
export function priceAt(price: ResolvedPrice, prompt: number): ResolvedPrice {
  let p = price;
  for (const t of price.tiers) if (prompt > t.above) p = t.price;
  return p;
}

/**
 * Cost in USD credits: tokens × price per million tokens × the model's Rates × the account's
 * Rates × its Factor. Cached input is billed at CachedText, cache writes at CacheWrite, the
 * rest of the input at InputText; reasoning tokens at ReasonText, the rest of the output at
 * OutputText; a call past a long-context threshold at that tier's prices.
 */
export function costOf(usage: TokenUsage, resolved: ResolvedPrice, accountRates: number, factor: number): number {
  const price = priceAt(resolved, usage.prompt);
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

let resolvedByPricing = new WeakMap<PricingOverrides, Map<string, ResolvedPrice>>();
let resolvedDay = -1;

/**
 * `resolvePrice`, memoized per PRICING object: the config store builds a new object on every
 * change, so a saved PRICING takes effect on the next request without any invalidation; the
 * memo starts over each UTC day with the catalogue's (a dated price change).
 */
export function priceFor(model: string, pricing: PricingOverrides): ResolvedPrice {
  const day = catalogueDay();
  if (day !== resolvedDay) {
    resolvedByPricing = new WeakMap();
    resolvedDay = day;
  }
  let byModel = resolvedByPricing.get(pricing);
  if (!byModel) resolvedByPricing.set(pricing, (byModel = new Map()));
  let p = byModel.get(model);
  if (!p) {
    p = resolvePrice(model, pricing);
    if (byModel.size >= 10_000) byModel.delete(byModel.keys().next().value!);
    byModel.set(model, p);
  }
  return p;
}
