import { catalogueDay, catalogueModel } from './catalogue';
import { CATALOGUE_GAPS, UNCATALOGUED_PRICES, type ChatPrice, type PriceField } from './default-prices';
import type { PricingOverrides } from './overrides';

/**
 * Token counts of one answer, as the usage parsers normalize them. The classes below `prompt`
 * and `completion` are parts of them, never added to them: a token is billed once, in the
 * first class that claims it (costOf), the rest of the input as text.
 */
export interface TokenUsage {
  /** All input tokens: cached, cache-written, audio and image ones included. */
  prompt: number;
  /** All output tokens: reasoning, audio and image ones included. */
  completion: number;
  reasoning: number;
  /** Input tokens read from the provider's cache, of any kind. */
  cached: number;
  /** Input tokens written to the provider's cache (Anthropic's cache_creation_input_tokens), of either lifetime. */
  cacheWrite: number;
  /** Of `cached`, audio ones (realtime's cached_tokens_details.audio_tokens). */
  cachedAudio?: number;
  /** Of `cacheWrite`, the ones kept an hour (Anthropic's cache_creation.ephemeral_1h_input_tokens). */
  cacheWrite1h?: number;
  /** Audio input tokens not read from the cache. */
  audioIn?: number;
  /** Image input tokens not read from the cache. */
  imageIn?: number;
  /** Of `completion`, audio and image tokens. */
  audioOut?: number;
  imageOut?: number;
  /** Web searches the provider ran for the answer (Anthropic's server_tool_use.web_search_requests): billed per search, not per token. */
  webSearches?: number;
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
  if (found) return Object.hasOwn(CATALOGUE_GAPS, found.id) ? { ...CATALOGUE_GAPS[found.id], ...found.price } : found.price;
  const bare = model.includes('/') ? model.slice(model.lastIndexOf('/') + 1) : model;
  return UNCATALOGUED_PRICES[bare.toLowerCase()] ?? null;
}

type Fields = Partial<Record<PriceField | 'Rates', number>>;

/**
 * Anthropic prices a one-hour cache write at twice the base input price (a five-minute one at
 * 1.25 times): a model that prices cache writes but not one-hour ones is billed so.
 */
export const ONE_HOUR_WRITE_FACTOR = 2;

/**
 * Prices field by field: `own` first, then `base`; the cache, reasoning, audio and image units
 * fall back to text; a one-hour cache write to ONE_HOUR_WRITE_FACTOR × input where the model
 * prices cache writes, else to the input (a model without cache-write prices is not Anthropic's,
 * and its reservations are not doubled for writes it never reports).
 */
function fill(own: Fields | undefined, base: Fields | undefined, known: boolean): ResolvedPrice {
  const f = (k: PriceField | 'Rates') => own?.[k] ?? base?.[k];
  const input = f('InputText') ?? 0;
  const output = f('OutputText') ?? 0;
  return {
    InputText: input,
    OutputText: output,
    CachedText: f('CachedText') ?? input,
    CacheWrite: f('CacheWrite') ?? input,
    CacheWrite1h: f('CacheWrite1h') ?? (f('CacheWrite') === undefined ? input : input * ONE_HOUR_WRITE_FACTOR),
    ReasonText: f('ReasonText') ?? output,
    InputAudio: f('InputAudio') ?? input,
    CachedAudio: f('CachedAudio') ?? f('InputAudio') ?? input,
    OutputAudio: f('OutputAudio') ?? output,
    InputImage: f('InputImage') ?? input,
    OutputImage: f('OutputImage') ?? output,
    // A search is priced per search, by the provider that runs it: no token price stands in for it.
    WebSearch: f('WebSearch') ?? 0,
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
 * field the Owner set holds at every length. `upstream` is the catalogue name of the model ID
 * the upstream was sent (`aws/us.anthropic.…` on a Bedrock key): where the catalogue prices it,
 * that price is the default instead of the client-facing model's (the Owner's PRICING, named
 * by the client's model, still goes over it).
 */
export function resolvePrice(model: string, pricing: PricingOverrides, upstream?: string): ResolvedPrice {
  const base = (upstream !== undefined ? defaultPrice(upstream) : null) ?? defaultPrice(model);
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
 * Rates × its Factor, each class at its own price — cache reads (audio at CachedAudio, the
 * rest at CachedText), cache writes (one-hour at CacheWrite1h, the rest at CacheWrite), audio
 * and image input, the rest of the input at InputText; reasoning, audio and image output, the
 * rest at OutputText — and a call past a long-context threshold at that tier's prices. Each
 * class is taken, in that order, from what the ones before it left, so a usage object that
 * claims more than its total never bills a token twice.
 */
export function costOf(usage: TokenUsage, resolved: ResolvedPrice, accountRates: number, factor: number): number {
  const price = priceAt(resolved, usage.prompt);
  // Plain arithmetic rather than a helper object: this runs once a call, on the settle path.
  let input = usage.prompt;
  const cached = Math.min(usage.cached, input);
  input -= cached;
  const cacheWrite = Math.min(usage.cacheWrite, input);
  input -= cacheWrite;
  const audioIn = Math.min(usage.audioIn ?? 0, input);
  input -= audioIn;
  const imageIn = Math.min(usage.imageIn ?? 0, input);
  input -= imageIn;
  const cachedAudio = Math.min(usage.cachedAudio ?? 0, cached);
  const write1h = Math.min(usage.cacheWrite1h ?? 0, cacheWrite);
  let output = usage.completion;
  const reasoning = Math.min(usage.reasoning, output);
  output -= reasoning;
  const audioOut = Math.min(usage.audioOut ?? 0, output);
  output -= audioOut;
  const imageOut = Math.min(usage.imageOut ?? 0, output);
  output -= imageOut;
  const base = input * price.InputText + (cached - cachedAudio) * price.CachedText + cachedAudio * price.CachedAudio
    + (cacheWrite - write1h) * price.CacheWrite + write1h * price.CacheWrite1h + audioIn * price.InputAudio + imageIn * price.InputImage
    + output * price.OutputText + reasoning * price.ReasonText + audioOut * price.OutputAudio + imageOut * price.OutputImage;
  // WebSearch is per thousand searches.
  const searches = usage.webSearches ? usage.webSearches * price.WebSearch * 1000 : 0;
  const cost = ((base + searches) / 1_000_000) * price.Rates * accountRates * factor;
  return Number.isFinite(cost) && cost > 0 ? cost : 0;
}

let resolvedByPricing = new WeakMap<PricingOverrides, Map<string, ResolvedPrice>>();
let resolvedDay = -1;

/**
 * `resolvePrice`, memoized per PRICING object: the config store builds a new object on every
 * change, so a saved PRICING takes effect on the next request without any invalidation; the
 * memo starts over each UTC day with the catalogue's (a dated price change). `upstream` as
 * resolvePrice takes it: one memo entry per client model and upstream ID.
 */
export function priceFor(model: string, pricing: PricingOverrides, upstream?: string): ResolvedPrice {
  const day = catalogueDay();
  if (day !== resolvedDay) {
    resolvedByPricing = new WeakMap();
    resolvedDay = day;
  }
  let byModel = resolvedByPricing.get(pricing);
  if (!byModel) resolvedByPricing.set(pricing, (byModel = new Map()));
  // No model name has a newline (the model-name stage refuses one), so the two parts cannot run together.
  const id = upstream === undefined ? model : `${model}\n${upstream}`;
  let p = byModel.get(id);
  if (!p) {
    p = resolvePrice(model, pricing, upstream);
    if (byModel.size >= 10_000) byModel.delete(byModel.keys().next().value!);
    byModel.set(id, p);
  }
  return p;
}
