/**
 * Prices and costs of the routes billed by their own unit rather than chat tokens: per call
 * (CallPricing: moderations), per search unit and input token (RerankPricing), per image by
 * size and quality or by reported tokens (ImgPricing, with ChatPricing's token fields), per
 * second of audio or reported tokens (AudioPricing: transcriptions, translations) and per
 * input character plus output audio tokens (AudioPricing: speech). Every unit also counts as
 * equivalent tokens (`equivalentTokens`): what token limits, the usage record's token columns
 * and an UNPRICED_MODEL_POLICY fallback price see.
 */
import { priceFor, type TokenUsage } from './cost';
import type { PriceEntry, PricingOverrides, PricingSection } from './overrides';
import type { UnpricedPolicy } from './unpriced-policy';
import { DEFAULT_AUDIO_PRICES, DEFAULT_CALL_PRICES, DEFAULT_IMAGE_PRICES, DEFAULT_RERANK_PRICES, type ImagePrice } from './route-prices';

export type UnitMeter = 'call' | 'rerank' | 'image' | 'transcription' | 'speech' | 'realtime';

/** A second of audio counts as this many audio tokens (OpenAI's audio models take about one per 100 ms). */
export const AUDIO_TOKENS_PER_SECOND = 10;
/** An image billed per image counts as this many output tokens towards token limits and a fallback price. */
export const IMAGE_EQUIVALENT_TOKENS = 1000;
/** Speech whose answer reports no tokens: output audio tokens per input character (about 15 characters and 20 audio tokens a second). */
export const SPEECH_AUDIO_TOKENS_PER_CHAR = 1.5;

/** Tokens by kind; for speech `textIn` counts input characters (AudioPricing.Input is per character). */
export interface UnitTokens {
  /** Input read from the provider's cache (realtime), apart from textIn and audioIn. */
  cachedText: number;
  cachedAudio: number;
  textIn: number;
  audioIn: number;
  imageIn: number;
  textOut: number;
  audioOut: number;
  imageOut: number;
}

/** What one call of a unit-billed route used. */
export interface UnitUsage {
  /** Billed at `Call`: the call itself (moderations, audio), or rerank search units. */
  calls: number;
  /** Images billed per image at the size's price; 0 when the images were billed by tokens. */
  images: number;
  size: string;
  quality: string;
  /** Seconds of audio heard (transcriptions), for the log; billed through `tokens.audioIn`. */
  audioSeconds: number;
  /** Input characters (speech), for the log; billed through `tokens.textIn`. */
  characters: number;
  tokens: UnitTokens;
}

export const NO_TOKENS: UnitTokens = { cachedText: 0, cachedAudio: 0, textIn: 0, audioIn: 0, imageIn: 0, textOut: 0, audioOut: 0, imageOut: 0 };

export function unitUsage(fields: Partial<UnitUsage> = {}): UnitUsage {
  return { calls: 0, images: 0, size: '', quality: '', audioSeconds: 0, characters: 0, tokens: NO_TOKENS, ...fields };
}

/** A unit route's price with the Owner's overrides applied. */
export interface UnitPrice {
  /** False when neither the defaults nor PRICING know the model for this route. */
  known: boolean;
  Rates: number;
  Call: number;
  Input: number;
  InputAudio: number;
  InputImage: number;
  Output: number;
  OutputAudio: number;
  OutputImage: number;
  CachedText: number;
  CachedAudio: number;
  /** Image price per quality and size (defaults), and the Owner's per-size prices over every quality. */
  qualities: Record<string, Record<string, number>>;
  sizes: Record<string, number>;
  /** The model's reported tokens are billed (gpt-image, gpt-4o-transcribe): a token price is set. */
  tokenPriced: boolean;
}

const SECTION: Record<UnitMeter, PricingSection> = {
  call: 'CallPricing',
  rerank: 'RerankPricing',
  image: 'ImgPricing',
  transcription: 'AudioPricing',
  speech: 'AudioPricing',
  realtime: 'ChatPricing',
};

/** An exact entry, else the longest known name followed by `-` (dated variants); a provider prefix is ignored. */
export function lookupModel<T>(table: Record<string, T>, model: string): T | undefined {
  const bare = model.includes('/') ? model.slice(model.lastIndexOf('/') + 1) : model;
  if (Object.hasOwn(table, bare)) return table[bare];
  let best = '';
  for (const name of Object.keys(table)) if (name.length > best.length && bare.startsWith(name + '-')) best = name;
  return best ? table[best] : undefined;
}

function defaultEntry(meter: UnitMeter, model: string): { entry: PriceEntry; image?: ImagePrice } | undefined {
  switch (meter) {
    case 'call': { const e = lookupModel(DEFAULT_CALL_PRICES, model); return e && { entry: e }; }
    case 'rerank': { const e = lookupModel(DEFAULT_RERANK_PRICES, model); return e && { entry: e }; }
    case 'image': { const i = lookupModel(DEFAULT_IMAGE_PRICES, model); return i && { entry: i.tokens ?? {}, image: i }; }
    default: { const e = lookupModel(DEFAULT_AUDIO_PRICES, model); return e && { entry: e }; }
  }
}

export function resolveUnitPrice(meter: UnitMeter, model: string, pricing: PricingOverrides): UnitPrice {
  if (meter === 'realtime') return realtimePrice(model, pricing);
  const base = defaultEntry(meter, model);
  const own = pricing[SECTION[meter]]?.[model];
  // Images read their token prices from ChatPricing's fields (InputText, InputImage, OutputImage).
  const chat = meter === 'image' ? pricing.ChatPricing?.[model] : undefined;
  const field = (name: string, chatName = name): number => own?.[name] ?? chat?.[chatName] ?? base?.entry[chatName] ?? base?.entry[name] ?? 0;
  const p: UnitPrice = {
    known: base !== undefined || own !== undefined || chat !== undefined,
    Rates: own?.Rates ?? base?.entry.Rates ?? 1,
    Call: field('Call'),
    Input: meter === 'image' ? field('InputText') : field('Input'),
    InputAudio: field('InputAudio'),
    InputImage: meter === 'image' ? field('InputImage') : 0,
    Output: meter === 'image' ? field('OutputText') : field('Output'),
    OutputAudio: field('OutputAudio'),
    OutputImage: meter === 'image' ? field('OutputImage') : 0,
    CachedText: 0,
    CachedAudio: 0,
    qualities: base?.image?.qualities ?? {},
    sizes: own?.Sizes ?? {},
    tokenPriced: false,
  };
  p.tokenPriced = meter === 'image' ? p.InputImage > 0 || p.OutputImage > 0 : meter === 'transcription' && (p.Input > 0 || p.Output > 0);
  return p;
}

/**
 * A realtime response is billed at its model's chat price (costOf, realtime/session.ts), so
 * its reservation reads that price too: the catalogue's with ChatPricing over it.
 */
function realtimePrice(model: string, pricing: PricingOverrides): UnitPrice {
  const p = priceFor(model, pricing);
  return {
    known: p.known, Rates: p.Rates, Call: 0, Input: p.InputText, InputAudio: p.InputAudio, InputImage: p.InputImage, Output: p.OutputText,
    OutputAudio: p.OutputAudio, OutputImage: 0, CachedText: p.CachedText, CachedAudio: p.CachedAudio, qualities: {}, sizes: {}, tokenPriced: false,
  };
}

const resolved = new WeakMap<PricingOverrides, Map<string, UnitPrice>>();

/** `resolveUnitPrice`, memoized per PRICING object (a saved PRICING is a new object). */
export function unitPriceFor(meter: UnitMeter, model: string, pricing: PricingOverrides): UnitPrice {
  let byModel = resolved.get(pricing);
  if (!byModel) resolved.set(pricing, (byModel = new Map()));
  const id = `${meter}\n${model}`;
  let p = byModel.get(id);
  if (!p) {
    p = resolveUnitPrice(meter, model, pricing);
    if (byModel.size < 10_000) byModel.set(id, p);
  }
  return p;
}

/**
 * The price of one image: the Owner's price for the size, else the default for the size at
 * the quality, else `Call`. An empty or `auto` size or quality takes the dearest (what the
 * provider may choose), so a reservation covers it.
 */
export function imagePrice(p: UnitPrice, size: string, quality: string): number {
  const anySize = size === '' || size === 'auto';
  if (!anySize && Object.hasOwn(p.sizes, size)) return p.sizes[size];
  let best = -1;
  const anyQuality = quality === '' || quality === 'auto' || !Object.hasOwn(p.qualities, quality);
  for (const q of anyQuality ? Object.keys(p.qualities) : [quality]) {
    const bySize = p.qualities[q];
    if (anySize) for (const s in bySize) best = Math.max(best, bySize[s]);
    else if (Object.hasOwn(bySize, size)) best = Math.max(best, bySize[size]);
  }
  if (anySize) for (const s in p.sizes) best = Math.max(best, p.sizes[s]);
  if (best >= 0) return Math.max(best, anySize ? p.Call : 0);
  // A size the table does not list costs Call, or else the model's dearest image: never nothing by accident.
  return p.Call > 0 || anySize ? p.Call : imagePrice(p, '', '');
}

/** Cost in USD credits: calls, images and tokens at their prices × the model's Rates × the account's Rates × Factor. */
export function unitCost(u: UnitUsage, p: UnitPrice, accountRates: number, factor: number): number {
  const t = u.tokens;
  const tokens = t.cachedText * p.CachedText + t.cachedAudio * p.CachedAudio + t.textIn * p.Input + t.audioIn * p.InputAudio + t.imageIn * p.InputImage + t.textOut * p.Output + t.audioOut * p.OutputAudio + t.imageOut * p.OutputImage;
  const base = u.calls * p.Call + (u.images > 0 ? u.images * imagePrice(p, u.size, u.quality) : 0) + tokens / 1_000_000;
  const cost = base * p.Rates * accountRates * factor;
  return Number.isFinite(cost) && cost > 0 ? cost : 0;
}

/** The call's units as tokens: what token limits count, the usage record holds and a fallback price bills. */
export function equivalentTokens(u: UnitUsage): TokenUsage {
  const t = u.tokens;
  return {
    prompt: Math.ceil(t.cachedText + t.cachedAudio + t.textIn + t.audioIn + t.imageIn),
    completion: Math.ceil(t.textOut + t.audioOut + t.imageOut + u.images * IMAGE_EQUIVALENT_TOKENS),
    reasoning: 0,
    cached: Math.ceil(t.cachedText + t.cachedAudio),
    cacheWrite: 0,
  };
}

/** What a unit call costs: at its price when known, else at the UNPRICED_MODEL_POLICY fallback by equivalent tokens (0 under refuse). */
export function unitCallCost(u: UnitUsage, p: UnitPrice, policy: UnpricedPolicy, accountRates: number, factor: number): number {
  if (p.known) return unitCost(u, p, accountRates, factor);
  if (policy.kind !== 'bill') return 0;
  const e = equivalentTokens(u);
  const cost = ((e.prompt * policy.inputText + e.completion * policy.outputText) / 1_000_000) * accountRates * factor;
  return Number.isFinite(cost) && cost > 0 ? cost : 0;
}
