import type { ModelPricing, TokenPrices } from '../../../contract/dashboard/schemas';
import { costOf, defaultPrice, type ResolvedPrice, type TokenUsage } from '../../domain/pricing/cost';
import type { PriceField } from '../../domain/pricing/default-prices';
import type { PricingOverrides } from '../../domain/pricing/overrides';
import { policyPrice, type UnpricedPolicy } from '../../domain/pricing/unpriced-policy';
import { unitCost, unitPriceFor, unitUsage } from '../../domain/pricing/units';

const M = 1_000_000;
const NONE: TokenUsage = { prompt: 0, completion: 0, reasoning: 0, cached: 0, cacheWrite: 0 };

type Optional = Exclude<keyof TokenPrices, 'input' | 'output' | 'cached_input'>;

/**
 * A million tokens of each class as the usage parsers report them (a class is part of `prompt`
 * or `completion`), and the price fields that, set for the model, make the class worth listing
 * apart. Each price is costOf of that usage, so it is what billing charges, not a copy of its rule.
 */
const CLASSES: { key: Optional; usage: TokenUsage; shownFor: PriceField[] }[] = [
  { key: 'cache_write', usage: { ...NONE, prompt: M, cacheWrite: M }, shownFor: ['CacheWrite'] },
  { key: 'cache_write_1h', usage: { ...NONE, prompt: M, cacheWrite: M, cacheWrite1h: M }, shownFor: ['CacheWrite', 'CacheWrite1h'] },
  { key: 'reasoning', usage: { ...NONE, completion: M, reasoning: M }, shownFor: ['ReasonText'] },
  { key: 'input_audio', usage: { ...NONE, prompt: M, audioIn: M }, shownFor: ['InputAudio'] },
  { key: 'cached_audio', usage: { ...NONE, prompt: M, cached: M, cachedAudio: M }, shownFor: ['CachedAudio'] },
  { key: 'output_audio', usage: { ...NONE, completion: M, audioOut: M }, shownFor: ['OutputAudio'] },
  { key: 'input_image', usage: { ...NONE, prompt: M, imageIn: M }, shownFor: ['InputImage'] },
  { key: 'output_image', usage: { ...NONE, completion: M, imageOut: M }, shownFor: ['OutputImage'] },
  // WebSearch is per thousand searches.
  { key: 'web_search', usage: { ...NONE, webSearches: 1000 }, shownFor: ['WebSearch'] },
];
const INPUT: TokenUsage = { ...NONE, prompt: M };
const OUTPUT: TokenUsage = { ...NONE, completion: M };
const CACHED: TokenUsage = { ...NONE, prompt: M, cached: M };

/** The fields the catalogue or the Owner's PRICING set for the model (not those filled from input or output). */
function pricedFields(model: string, pricing: PricingOverrides): Set<string> {
  return new Set([...Object.keys(defaultPrice(model) ?? {}), ...Object.keys(pricing.ChatPricing?.[model] ?? {})]);
}

/** One price level (the base or a long-context tier) as the caller pays it. */
function tokenPrices(price: ResolvedPrice, shown: Set<string>, rates: number, factor: number): TokenPrices {
  // A price without its tiers: a million tokens must not reach the long-context level it lists apart.
  const level = price.tiers.length ? { ...price, tiers: [] } : price;
  const out: TokenPrices = {
    input: costOf(INPUT, level, rates, factor),
    output: costOf(OUTPUT, level, rates, factor),
    cached_input: costOf(CACHED, level, rates, factor),
  };
  for (const c of CLASSES) if (c.shownFor.some((f) => shown.has(f))) out[c.key] = costOf(c.usage, level, rates, factor);
  return out;
}

/**
 * What an account pays for calls by the name `listed`: the model the mappers route it to
 * (`billedAs`), priced as settle prices it (policyPrice, costOf; CallPricing by unitCost) with
 * the account's Rates and Factor. Null when the model has no price and UNPRICED_MODEL_POLICY
 * refuses it. The upstream's own model ID (a Bedrock key's, which settle may price by) is not
 * known before a key is picked: the price listed is the client-facing model's.
 */
export function modelPricing(
  billedAs: string,
  owner: { pricing: PricingOverrides; unpricedPolicy: UnpricedPolicy },
  account: { rates: number; factor: number },
): ModelPricing | null {
  const { rates, factor } = account;
  const price = policyPrice(billedAs, owner.pricing, owner.unpricedPolicy);
  const perCall = unitPriceFor('call', billedAs, owner.pricing);
  const call = perCall.known ? unitCost(unitUsage({ calls: 1 }), perCall, rates, factor) : undefined;
  const tokensBilled = price.known || owner.unpricedPolicy.kind === 'bill';
  if (!tokensBilled && call === undefined) return null;
  const shown = price.known ? pricedFields(billedAs, owner.pricing) : new Set<string>();
  const tokens: TokenPrices = tokensBilled ? tokenPrices(price, shown, rates, factor) : { input: null, output: null, cached_input: null };
  const out: ModelPricing = { billed_as: billedAs, ...tokens };
  if (price.known && price.tiers.length) out.long_context = price.tiers.map((t) => ({ above: t.above, ...tokenPrices(t.price, shown, rates, factor) }));
  if (call !== undefined) out.call = call;
  if (!price.known && tokensBilled) out.fallback = true;
  return out;
}
