import { MapperError } from '../mapping/mappers';
import { flatPrice, priceFor, type ResolvedPrice } from './cost';
import type { PricingOverrides } from './overrides';

/**
 * What the proxy does with a model neither the default price table nor the Owner's PRICING
 * knows (UNPRICED_MODEL_POLICY): refuse it (the default, so nobody is served for free), or
 * bill it at a fallback price in USD per million input and output tokens.
 */
export type UnpricedPolicy =
  | { kind: 'refuse' }
  | { kind: 'bill'; inputText: number; outputText: number };

export const REFUSE_UNPRICED: UnpricedPolicy = { kind: 'refuse' };

const PRICE = /^(?:\d{1,9}(?:\.\d{1,12})?|\.\d{1,12})$/;

/** `refuse`, or `bill:<InputText>,<OutputText>` (USD per million tokens, e.g. `bill:10,30`); empty means refuse. */
export function parseUnpricedPolicy(raw: string, field = 'UNPRICED_MODEL_POLICY'): UnpricedPolicy {
  const v = raw.trim();
  if (v === '' || v === 'refuse') return REFUSE_UNPRICED;
  const m = /^bill:\s*([^,\s]+)\s*,\s*([^,\s]+)$/.exec(v);
  if (!m || !PRICE.test(m[1]) || !PRICE.test(m[2])) {
    throw new MapperError(`${field}: must be "refuse" or "bill:<InputText>,<OutputText>" in USD per million tokens (e.g. "bill:10,30")`);
  }
  const inputText = Number(m[1]);
  const outputText = Number(m[2]);
  if (inputText === 0 && outputText === 0) throw new MapperError(`${field}: a fallback price of 0 would serve unpriced models for free; use "refuse" or a price above 0`);
  return { kind: 'bill', inputText, outputText };
}

export function formatUnpricedPolicy(p: UnpricedPolicy): string {
  return p.kind === 'refuse' ? 'refuse' : `bill:${p.inputText},${p.outputText}`;
}

const fallbackPrices = new WeakMap<UnpricedPolicy, ResolvedPrice>();

/**
 * The price a model is reserved and billed at: its known price, else under `bill` the
 * fallback (cached input, cache writes, audio and image input at the input price; reasoning,
 * audio and image output at the output price); under `refuse` the unknown price (cost 0: the
 * proxy refused such a call before it reached a provider). `upstream`: the upstream's own model
 * ID, as priceFor takes it.
 */
export function policyPrice(model: string, pricing: PricingOverrides, policy: UnpricedPolicy, upstream?: string): ResolvedPrice {
  const p = priceFor(model, pricing, upstream);
  if (p.known || policy.kind !== 'bill') return p;
  let f = fallbackPrices.get(policy);
  if (!f) {
    f = flatPrice(policy.inputText, policy.outputText, false);
    fallbackPrices.set(policy, f);
  }
  return f;
}
