/**
 * The providers' usage objects as their API references show them, read into token classes
 * and billed class by class: nothing at a cheaper class's price, nothing twice.
 */
import { describe, expect, it } from 'vitest';
import { costOf, resolvePrice } from '../../domain/pricing/cost';
import { realtimeUsage } from '../realtime/usage';
import { estimateUsage, largerOfEach, normalizeUsage } from './response-usage';

/** Chat Completions with gpt-4o-audio-preview, `modalities: ["text", "audio"]` and an audio question. */
const CHAT_AUDIO = {
  prompt_tokens: 1200, completion_tokens: 700, total_tokens: 1900,
  prompt_tokens_details: { cached_tokens: 0, audio_tokens: 1000 },
  completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 600, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
};

/** Anthropic Messages with a one-hour and a five-minute cache breakpoint. */
const ANTHROPIC_1H = {
  input_tokens: 50, cache_creation_input_tokens: 3000, cache_read_input_tokens: 1000,
  cache_creation: { ephemeral_5m_input_tokens: 1000, ephemeral_1h_input_tokens: 2000 },
  output_tokens: 200, service_tier: 'standard',
};

/** A realtime `response.done` (GA shape): cached tokens within each kind. */
const REALTIME_DONE = {
  total_tokens: 1500, input_tokens: 1100, output_tokens: 400,
  input_token_details: { text_tokens: 300, audio_tokens: 700, image_tokens: 100, cached_tokens: 264, cached_tokens_details: { text_tokens: 200, audio_tokens: 64, image_tokens: 0 } },
  output_token_details: { text_tokens: 100, audio_tokens: 300 },
};

describe('normalizeUsage', () => {
  it('reads audio tokens of a Chat Completions answer', () => {
    expect(normalizeUsage(CHAT_AUDIO, 'openai')).toEqual({
      prompt: 1200, completion: 700, reasoning: 0, cached: 0, cacheWrite: 0, audioIn: 1000, audioOut: 600,
    });
  });

  it('reads the Responses details under their own names (cached, audio, image, reasoning)', () => {
    const u = {
      input_tokens: 900, input_tokens_details: { cached_tokens: 100, audio_tokens: 300, image_tokens: 200 },
      output_tokens: 50, output_tokens_details: { reasoning_tokens: 20 }, total_tokens: 950,
    };
    expect(normalizeUsage(u, 'openai')).toEqual({ prompt: 900, completion: 50, reasoning: 20, cached: 100, cacheWrite: 0, audioIn: 300, imageIn: 200 });
  });

  it("splits Anthropic's cache writes by lifetime, within the prompt", () => {
    expect(normalizeUsage(ANTHROPIC_1H, 'anthropic')).toEqual({ prompt: 4050, completion: 200, reasoning: 0, cached: 1000, cacheWrite: 3000, cacheWrite1h: 2000 });
    // Before cache_creation existed: every write is a five-minute one.
    expect(normalizeUsage({ input_tokens: 5, cache_creation_input_tokens: 10, output_tokens: 1 }, 'anthropic')).toEqual({ prompt: 15, completion: 1, reasoning: 0, cached: 0, cacheWrite: 10 });
  });

  it('keeps the classes of a stream\'s first report when its last one carries only the output (Anthropic)', () => {
    const start = normalizeUsage({ ...ANTHROPIC_1H, output_tokens: 1 }, 'anthropic')!;
    const delta = normalizeUsage({ output_tokens: 200 }, 'anthropic')!;
    expect(largerOfEach(start, delta)).toEqual(normalizeUsage(ANTHROPIC_1H, 'anthropic'));
    // A cut stream keeps them too, its output estimated from what was delivered.
    expect(estimateUsage(start, 400, 9)).toMatchObject({ prompt: 4050, completion: 9, cached: 1000, cacheWrite: 3000, cacheWrite1h: 2000 });
  });

  it("reads a realtime response's classes, cached audio apart from the rest of the audio", () => {
    expect(realtimeUsage(REALTIME_DONE)).toEqual({
      prompt: 1100, completion: 400, reasoning: 0, cached: 264, cachedAudio: 64, cacheWrite: 0, audioIn: 636, imageIn: 100, audioOut: 300,
    });
    // A cache that does not name its kinds is audio beyond the text it names.
    const bare = { input_tokens: 30, output_tokens: 0, input_token_details: { text_tokens: 10, audio_tokens: 20, cached_tokens: 15, cached_tokens_details: { text_tokens: 10 } } };
    expect(realtimeUsage(bare)).toMatchObject({ prompt: 30, cached: 15, cachedAudio: 5, audioIn: 15 });
  });
});

describe('costOf with the parsed classes', () => {
  it('bills gpt-4o-audio-preview audio at its audio prices: 40 in, 80 out (the catalogue lists only text)', () => {
    const price = resolvePrice('gpt-4o-audio-preview-2024-12-17', {});
    const usage = normalizeUsage(CHAT_AUDIO, 'openai')!;
    expect(costOf(usage, price, 1, 1)).toBeCloseTo((200 * 2.5 + 1000 * 40 + 100 * 10 + 600 * 80) / 1e6, 12);
  });

  it("bills Claude's one-hour writes at twice the input, five-minute ones at 1.25 times", () => {
    const price = resolvePrice('claude-sonnet-4-5-20250929', {});
    expect(price).toMatchObject({ InputText: 3, CacheWrite: 3.75, CacheWrite1h: 6, CachedText: 0.3 });
    const usage = normalizeUsage(ANTHROPIC_1H, 'anthropic')!;
    expect(costOf(usage, price, 1, 1)).toBeCloseTo((50 * 3 + 1000 * 0.3 + 1000 * 3.75 + 2000 * 6 + 200 * 15) / 1e6, 12);
  });

  it('bills a realtime response at gpt-realtime prices, class by class', () => {
    // gpt-realtime: text 4 / cached 0.4 / audio 32 / cached audio 0.4 / image 5; out text 16, audio 64.
    const cost = costOf(realtimeUsage(REALTIME_DONE), resolvePrice('gpt-realtime', {}), 1, 1);
    expect(cost).toBeCloseTo((100 * 4 + 200 * 0.4 + 64 * 0.4 + 636 * 32 + 100 * 5 + 100 * 16 + 300 * 64) / 1e6, 12);
  });
});
