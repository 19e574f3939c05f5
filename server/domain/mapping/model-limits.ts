import { MapperError } from './mappers';

export type ModelLimitMap = Record<string, { rpm?: number; tpm?: number }>;

/** Validates a MODEL_LIMITS object: `{"gpt-4o":{"rpm":30,"tpm":90000}}`. */
export function validateModelLimits(value: unknown, what = 'MODEL_LIMITS'): ModelLimitMap {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new MapperError(`${what}: must be a JSON object keyed by model`);
  const out: ModelLimitMap = {};
  for (const [model, limit] of Object.entries(value)) {
    if (!model || model.length > 200) throw new MapperError(`${what}: invalid model name "${model}"`);
    if (typeof limit !== 'object' || limit === null || Array.isArray(limit)) throw new MapperError(`${what}.${model}: must be an object with rpm and/or tpm`);
    const entry: { rpm?: number; tpm?: number } = {};
    for (const [k, v] of Object.entries(limit)) {
      if (k !== 'rpm' && k !== 'tpm') throw new MapperError(`${what}.${model}: unknown field "${k}" (only rpm and tpm)`);
      if (!Number.isSafeInteger(v) || (v as number) < 0) throw new MapperError(`${what}.${model}.${k}: must be a non-negative integer`);
      entry[k] = v as number;
    }
    out[model] = entry;
  }
  return out;
}

export function parseModelLimitsJson(raw: string, what = 'MODEL_LIMITS'): ModelLimitMap {
  if (raw.trim() === '') return {};
  let parsed: unknown;
  try { parsed = JSON.parse(raw); } catch { throw new MapperError(`${what}: not valid JSON`); }
  return validateModelLimits(parsed, what);
}

/**
 * Applies the `/x-conf` ModelLimits forms: an object merges, `*` or `=` clears everything,
 * `-<model>` removes one model's limit.
 */
export function applyModelLimitsChange(current: ModelLimitMap, change: unknown): ModelLimitMap {
  if (typeof change === 'string') {
    const s = change.trim();
    if (s === '*' || s === '=') return {};
    if (s.startsWith('-') && s.length > 1) {
      const { [s.slice(1)]: _, ...rest } = current;
      return rest;
    }
    if (s.startsWith('{')) return { ...current, ...parseModelLimitsJson(s, 'ModelLimits') };
    throw new MapperError('ModelLimits: a string must be "*", "=", "-<model>" or a JSON object');
  }
  return { ...current, ...validateModelLimits(change, 'ModelLimits') };
}
