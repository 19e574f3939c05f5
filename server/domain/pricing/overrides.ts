import { MapperError } from '../mapping/mappers';

/**
 * PRICING holds only the differences from the default price table (USD per million tokens,
 * `Call` in USD per call, `Rates` a per-model multiplier), in the reference system's layout.
 */
export const PRICING_SECTIONS = {
  ChatPricing: ['CacheWrite', 'CacheWrite1h', 'CachedText', 'CachedAudio', 'InputText', 'InputAudio', 'InputImage', 'ReasonText', 'OutputText', 'OutputAudio', 'OutputImage', 'WebSearch', 'Rates'],
  ImgPricing: ['Call', 'Rates', 'Sizes'],
  AudioPricing: ['Input', 'InputAudio', 'Output', 'OutputAudio', 'Call', 'Rates'],
  CallPricing: ['Call', 'Rates'],
  RerankPricing: ['Input', 'Call', 'Rates'],
  FineTuningPricing: ['InputText', 'OutputText', 'Rates'],
} as const;

export type PricingSection = keyof typeof PRICING_SECTIONS;
export type PriceEntry = Partial<Record<string, number>> & { Sizes?: Record<string, number> };
export type PricingOverrides = Partial<Record<PricingSection, Record<string, PriceEntry>>>;

export const PRICING_MAX_BYTES = 128 * 1024;
export const PRICING_MAX_ENTRIES = 1024;

function price(v: unknown, where: string): number {
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new MapperError(`PRICING.${where}: must be a finite non-negative number`);
  return v;
}

export function parsePricing(raw: string): PricingOverrides {
  if (raw.trim() === '') return {};
  if (Buffer.byteLength(raw, 'utf8') > PRICING_MAX_BYTES) throw new MapperError(`PRICING: larger than ${PRICING_MAX_BYTES} bytes`);
  let doc: unknown;
  try { doc = JSON.parse(raw); } catch { throw new MapperError('PRICING: not valid JSON'); }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new MapperError('PRICING: must be a JSON object');
  let count = 0;
  const out: PricingOverrides = {};
  for (const [section, models] of Object.entries(doc)) {
    if (!(section in PRICING_SECTIONS)) throw new MapperError(`PRICING: unknown section "${section}" (allowed: ${Object.keys(PRICING_SECTIONS).join(', ')})`);
    if (typeof models !== 'object' || models === null || Array.isArray(models)) throw new MapperError(`PRICING.${section}: must be an object keyed by model`);
    const fields: readonly string[] = PRICING_SECTIONS[section as PricingSection];
    const sectionOut: Record<string, PriceEntry> = {};
    for (const [model, entry] of Object.entries(models)) {
      if (++count > PRICING_MAX_ENTRIES) throw new MapperError(`PRICING: more than ${PRICING_MAX_ENTRIES} entries`);
      if (!model || model.length > 200) throw new MapperError(`PRICING.${section}: invalid model name "${model}"`);
      if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) throw new MapperError(`PRICING.${section}.${model}: must be an object`);
      const e: PriceEntry = {};
      for (const [field, v] of Object.entries(entry)) {
        if (!fields.includes(field)) throw new MapperError(`PRICING.${section}.${model}: unknown field "${field}"`);
        if (field === 'Sizes') {
          if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new MapperError(`PRICING.${section}.${model}.Sizes: must be an object`);
          e.Sizes = {};
          for (const [size, n] of Object.entries(v)) {
            if (!/^\d{1,5}x\d{1,5}$/.test(size)) throw new MapperError(`PRICING.${section}.${model}.Sizes: "${size}" is not WIDTHxHEIGHT`);
            e.Sizes[size] = price(n, `${section}.${model}.Sizes.${size}`);
          }
        } else e[field] = price(v, `${section}.${model}.${field}`);
      }
      sectionOut[model] = e;
    }
    out[section as PricingSection] = sectionOut;
  }
  return out;
}
