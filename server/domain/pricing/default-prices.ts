/**
 * The price of a model in USD per million tokens, in PRICING's ChatPricing layout: InputText,
 * CachedText (cache read), CacheWrite (a five-minute cache write), CacheWrite1h (a one-hour
 * one), OutputText, ReasonText (reasoning tokens; billed as output where absent), the audio and
 * image units, and long-context tiers. Default prices come
 * from the catalogue (catalogue.ts); PRICING overrides them per Owner.
 */
export type PriceField =
  | 'InputText' | 'CachedText' | 'CacheWrite' | 'CacheWrite1h' | 'OutputText' | 'ReasonText'
  | 'InputAudio' | 'CachedAudio' | 'OutputAudio' | 'InputImage' | 'OutputImage'
  /** USD per 1,000 web searches the provider ran (Anthropic's server_tool_use.web_search_requests), not per million tokens. */
  | 'WebSearch';

export const PRICE_FIELDS: readonly PriceField[] = [
  'InputText', 'CachedText', 'CacheWrite', 'CacheWrite1h', 'OutputText', 'ReasonText', 'InputAudio', 'CachedAudio', 'OutputAudio', 'InputImage', 'OutputImage', 'WebSearch',
];

export interface ChatPrice extends Partial<Record<PriceField, number>> {
  InputText: number;
  OutputText: number;
  Rates?: number;
  /**
   * Long-context prices: a call whose input exceeds `above` tokens is billed at these prices
   * (the fields given; the others as below), as providers price prompts past 200k.
   */
  Tiers?: { above: number; prices: Partial<Record<PriceField, number>> }[];
}

/**
 * Models the catalogue does not price that a gateway still serves by default; everything else
 * comes from the catalogue. Google's text-embedding-004 is free on the Gemini API.
 */
export const UNCATALOGUED_PRICES: Record<string, ChatPrice> = {
  'text-embedding-004': { InputText: 0, OutputText: 0 },
};

/**
 * Units the catalogue leaves out of a model it prices (keyed by its catalogue id), added where
 * its entry lacks them: OpenAI's audio preview models list only their text prices there, and
 * their audio tokens cost 16 times as much and more (openai.com/api/pricing).
 */
export const CATALOGUE_GAPS: Record<string, Partial<Record<PriceField, number>>> = {
  'gpt-4o-audio-preview': { InputAudio: 40, OutputAudio: 80 },
  'gpt-4o-mini-audio-preview': { InputAudio: 10, OutputAudio: 20 },
};
