import type { ResolvedPrice } from './cost';
import { PRICE_FIELDS } from './default-prices';

/**
 * What a provider batch (OpenAI's Batch API, Anthropic's Message Batches) pays: half the
 * standard price of every token class, as both providers charge. The catalogue
 * (@pydantic/genai-prices) lists no batch prices, so the rule is the providers' 50 % on the
 * model's resolved price (the Owner's PRICING included), tiers too. Web searches are priced per
 * search, not per token, and stay as they are.
 */
export const BATCH_DISCOUNT = 0.5;

const memo = new WeakMap<ResolvedPrice, ResolvedPrice>();

export function batchPrice(p: ResolvedPrice): ResolvedPrice {
  let b = memo.get(p);
  if (!b) {
    b = { ...p, tiers: p.tiers.map((t) => ({ above: t.above, price: batchPrice(t.price) })) };
    for (const f of PRICE_FIELDS) if (f !== 'WebSearch') b[f] = p[f] * BATCH_DISCOUNT;
    memo.set(p, b);
  }
  return b;
}
