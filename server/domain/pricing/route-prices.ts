/**
 * Default prices of the routes not billed by chat tokens, in PRICING's per-route layout, from
 * the providers' public price pages (https://openai.com/api/pricing, https://cohere.com/pricing,
 * https://jina.ai/reranker) as of 2026. The Owner's PRICING overrides them field by field.
 * Units (see units.ts): `Call` USD per call (per image for images, per search unit for rerank),
 * `Sizes` USD per image of that size, every other field USD per million (equivalent) tokens.
 */
import type { PriceEntry } from './overrides';

/** Image prices by quality, then by size; `tokens` where the model reports token usage. */
export interface ImagePrice {
  qualities: Record<string, Record<string, number>>;
  /** ChatPricing fields for models billed by the tokens they report (gpt-image). */
  tokens?: PriceEntry;
}

export const DEFAULT_IMAGE_PRICES: Record<string, ImagePrice> = {
  'dall-e-2': { qualities: { standard: { '256x256': 0.016, '512x512': 0.018, '1024x1024': 0.02 } } },
  'dall-e-3': {
    qualities: {
      standard: { '1024x1024': 0.04, '1024x1792': 0.08, '1792x1024': 0.08 },
      hd: { '1024x1024': 0.08, '1024x1792': 0.12, '1792x1024': 0.12 },
    },
  },
  'gpt-image-1': {
    qualities: {
      low: { '1024x1024': 0.011, '1024x1536': 0.016, '1536x1024': 0.016 },
      medium: { '1024x1024': 0.042, '1024x1536': 0.063, '1536x1024': 0.063 },
      high: { '1024x1024': 0.167, '1024x1536': 0.25, '1536x1024': 0.25 },
    },
    tokens: { InputText: 5, InputImage: 10, OutputImage: 40 },
  },
  'gpt-image-1-mini': {
    qualities: {
      low: { '1024x1024': 0.005, '1024x1536': 0.006, '1536x1024': 0.006 },
      medium: { '1024x1024': 0.011, '1024x1536': 0.015, '1536x1024': 0.015 },
      high: { '1024x1024': 0.036, '1024x1536': 0.052, '1536x1024': 0.052 },
    },
    tokens: { InputText: 2, InputImage: 2.5, OutputImage: 8 },
  },
};

/**
 * AudioPricing defaults. Transcription: `InputAudio` per million audio tokens, a second of
 * audio counting 10 (whisper-1's 0.006 USD a minute is 10 per million); `Input`/`Output` the
 * text tokens of models that report tokens. Speech: `Input` per million input characters,
 * `OutputAudio` per million audio tokens of models that report (or are estimated) tokens.
 */
export const DEFAULT_AUDIO_PRICES: Record<string, PriceEntry> = {
  'whisper-1': { InputAudio: 10 },
  'gpt-4o-transcribe': { Input: 2.5, InputAudio: 6, Output: 10 },
  'gpt-4o-mini-transcribe': { Input: 1.25, InputAudio: 3, Output: 5 },
  'tts-1': { Input: 15 },
  'tts-1-hd': { Input: 30 },
  'gpt-4o-mini-tts': { Input: 0.15, OutputAudio: 12 },
};

/** CallPricing defaults: OpenAI's moderation models are free, and known to be. */
export const DEFAULT_CALL_PRICES: Record<string, PriceEntry> = {
  'omni-moderation-latest': { Call: 0 },
  'omni-moderation-2024-09-26': { Call: 0 },
  'text-moderation-latest': { Call: 0 },
  'text-moderation-stable': { Call: 0 },
};

/** RerankPricing defaults: `Call` per search unit (a query with up to 100 documents), `Input` per million tokens. */
export const DEFAULT_RERANK_PRICES: Record<string, PriceEntry> = {
  'rerank-v3.5': { Call: 0.002 },
  'rerank-english-v3.0': { Call: 0.002 },
  'rerank-multilingual-v3.0': { Call: 0.002 },
  'jina-reranker-v2-base-multilingual': { Input: 0.02 },
  'jina-reranker-m0': { Input: 0.02 },
};
