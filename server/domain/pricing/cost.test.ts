import { describe, expect, it } from 'vitest';
import { costOf, defaultPrice, priceFor, resolvePrice } from './cost';
import { parsePricing } from './overrides';

describe('pricing', () => {
  it('finds default prices for dated and prefixed variants', () => {
    expect(defaultPrice('gpt-4o-2024-08-06')?.InputText).toBe(2.5);
    expect(defaultPrice('gpt-4o-mini-2024-07-18')?.InputText).toBe(0.15);
    expect(defaultPrice('claude-sonnet-4-5-20250929')?.OutputText).toBe(15);
    expect(defaultPrice('google/gemini-2.5-flash')?.InputText).toBe(0.3);
    expect(defaultPrice('no-such-model')).toBeNull();
  });

  it('overrides defaults field by field with PRICING and applies the model Rates', () => {
    const pricing = parsePricing(JSON.stringify({ ChatPricing: { 'gpt-4o': { OutputText: 20, Rates: 2 }, 'house-model': { InputText: 1, OutputText: 1 } } }));
    const p = resolvePrice('gpt-4o', pricing);
    expect(p).toMatchObject({ InputText: 2.5, OutputText: 20, CachedText: 1.25, Rates: 2, known: true });
    expect(resolvePrice('house-model', pricing)).toMatchObject({ InputText: 1, CachedText: 1, known: true });
    expect(resolvePrice('unknown', pricing)).toMatchObject({ InputText: 0, OutputText: 0, known: false });
    expect(priceFor('gpt-4o', pricing)).toBe(priceFor('gpt-4o', pricing));
  });

  it('bills cached, cache-write, reasoning and plain tokens at their prices, times Rates and Factor', () => {
    const price = resolvePrice('claude-sonnet-4-5', {});
    // 1000 plain input at 3, 2000 cache reads at 0.3, 500 cache writes at 3.75, 100 output at 15
    const usage = { prompt: 3500, completion: 100, reasoning: 0, cached: 2000, cacheWrite: 500 };
    const base = (1000 * 3 + 2000 * 0.3 + 500 * 3.75 + 100 * 15) / 1e6;
    expect(costOf(usage, price, 1, 1)).toBeCloseTo(base, 12);
    expect(costOf(usage, price, 1.5, 2)).toBeCloseTo(base * 3, 12);
    const o = { ...resolvePrice('o3', {}), ReasonText: 4 };
    expect(costOf({ prompt: 0, completion: 300, reasoning: 200, cached: 0, cacheWrite: 0 }, o, 1, 1)).toBeCloseTo((100 * 8 + 200 * 4) / 1e6, 12);
    expect(costOf({ prompt: 10, completion: 10, reasoning: 0, cached: 0, cacheWrite: 0 }, resolvePrice('unknown', {}), 1, 1)).toBe(0);
  });
});
