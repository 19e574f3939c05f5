import { describe, expect, it } from 'vitest';
import { costOf, defaultPrice, flatPrice, priceFor, resolvePrice } from './cost';
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

  it('prices a call at the upstream ID\'s own catalogue price where it has one, the client model\'s PRICING over it', () => {
    const profile = 'aws/us.anthropic.claude-sonnet-4-5-20250929-v1:0';
    const own = defaultPrice(profile)!;
    expect(own.InputText).not.toBe(defaultPrice('claude-sonnet-4-5')!.InputText);
    expect(resolvePrice('claude-sonnet-4-5', {}, profile)).toMatchObject({ InputText: own.InputText, OutputText: own.OutputText, known: true });
    // No catalogue entry for the ID: the client-facing model's price.
    expect(resolvePrice('claude-sonnet-4-5', {}, 'aws/us.anthropic.claude-house-tuned-v1:0')).toEqual(resolvePrice('claude-sonnet-4-5', {}));
    expect(resolvePrice('house-alias', {}, profile)).toMatchObject({ InputText: own.InputText, known: true });
    const pricing = parsePricing(JSON.stringify({ ChatPricing: { 'claude-sonnet-4-5': { OutputText: 20 } } }));
    expect(resolvePrice('claude-sonnet-4-5', pricing, profile)).toMatchObject({ InputText: own.InputText, OutputText: 20 });
    // Memoized per client model and upstream ID, apart from the model alone.
    expect(priceFor('claude-sonnet-4-5', pricing, profile)).toBe(priceFor('claude-sonnet-4-5', pricing, profile));
    expect(priceFor('claude-sonnet-4-5', pricing, profile)).not.toBe(priceFor('claude-sonnet-4-5', pricing));
    // A client's LiteLLM-style `bedrock/` prefix asks the catalogue's Bedrock prices as `aws/` does.
    expect(defaultPrice('bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0')).toEqual(own);
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

  it('bills audio, image, cached-audio and one-hour write tokens at their own prices, each token once', () => {
    const price = resolvePrice('house', parsePricing(JSON.stringify({ ChatPricing: { house: {
      InputText: 1, CachedText: 0.1, CachedAudio: 0.2, CacheWrite: 1.25, CacheWrite1h: 2, InputAudio: 10, InputImage: 3, OutputText: 4, ReasonText: 5, OutputAudio: 20, OutputImage: 30,
    } } })));
    const usage = { prompt: 1000, completion: 500, reasoning: 50, cached: 300, cachedAudio: 100, cacheWrite: 200, cacheWrite1h: 150, audioIn: 250, imageIn: 100, audioOut: 200, imageOut: 100 };
    // in: 150 text, 200 cached text, 100 cached audio, 50 five-minute writes, 150 one-hour writes, 250 audio, 100 image
    // out: 150 text, 50 reasoning, 200 audio, 100 image
    const base = 150 * 1 + 200 * 0.1 + 100 * 0.2 + 50 * 1.25 + 150 * 2 + 250 * 10 + 100 * 3 + 150 * 4 + 50 * 5 + 200 * 20 + 100 * 30;
    expect(costOf(usage, price, 1, 1)).toBeCloseTo(base / 1e6, 12);
    // Classes claiming more than the total are cut to what is left: 100 tokens of input, all audio.
    expect(costOf({ prompt: 100, completion: 0, reasoning: 0, cached: 0, cacheWrite: 0, audioIn: 400, imageIn: 400 }, price, 1, 1)).toBeCloseTo((100 * 10) / 1e6, 12);
    expect(costOf({ prompt: 0, completion: 100, reasoning: 80, cached: 0, cacheWrite: 0, audioOut: 80 }, price, 1, 1)).toBeCloseTo((80 * 5 + 20 * 20) / 1e6, 12);
  });

  it('prices a class nobody priced as fill does: audio and image at text, a one-hour write at twice the input where writes are priced', () => {
    const pricing = parsePricing(JSON.stringify({ ChatPricing: { plain: { InputText: 1, OutputText: 4 }, cachey: { InputText: 1, CacheWrite: 1.25, OutputText: 4 } } }));
    expect(resolvePrice('plain', pricing)).toMatchObject({ InputAudio: 1, InputImage: 1, CachedAudio: 1, CacheWrite: 1, CacheWrite1h: 1, OutputAudio: 4, OutputImage: 4 });
    expect(resolvePrice('cachey', pricing)).toMatchObject({ CacheWrite: 1.25, CacheWrite1h: 2 });
    // The catalogue's own one-hour price, and its long-context tier's.
    const sonnet = resolvePrice('claude-sonnet-4-5', {});
    expect(sonnet.CacheWrite1h).toBe(6);
    expect(sonnet.tiers[0].price.CacheWrite1h).toBe(12);
    // An Owner's price holds over the catalogue's; UNPRICED_MODEL_POLICY's flat price is one input price for every input class.
    expect(resolvePrice('claude-sonnet-4-5', parsePricing(JSON.stringify({ ChatPricing: { 'claude-sonnet-4-5': { CacheWrite1h: 7 } } }))).CacheWrite1h).toBe(7);
    expect(flatPrice(2, 8, false)).toMatchObject({ CacheWrite: 2, CacheWrite1h: 2, InputAudio: 2, OutputAudio: 8 });
  });

  it("adds the audio prices the catalogue leaves out of OpenAI's audio preview models", () => {
    expect(defaultPrice('gpt-4o-audio-preview')).toMatchObject({ InputText: 2.5, OutputText: 10, InputAudio: 40, OutputAudio: 80 });
    expect(defaultPrice('gpt-4o-mini-audio-preview-2024-12-17')).toMatchObject({ InputText: 0.15, OutputText: 0.6, InputAudio: 10, OutputAudio: 20 });
  });
});
