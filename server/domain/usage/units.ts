/**
 * The units a call of a unit-billed route used (and the web searches a provider ran for a chat
 * call, billed per search beside its tokens), by kind, as usage records, the daily rollups,
 * bills and the request log keep them: `{ images: 2 }`, `{ audio_seconds: 31.5, calls: 1 }`.
 * Absent for calls billed by tokens alone, so a chat call carries and stores nothing more.
 */
import type { UnitMeter, UnitUsage } from '../pricing/units';

export const UNIT_KINDS = ['images', 'audio_seconds', 'characters', 'calls', 'search_units', 'audio_tokens', 'web_searches'] as const;
export type UnitKind = (typeof UNIT_KINDS)[number];
export type UsageUnits = Partial<Record<UnitKind, number>>;

const KINDS: ReadonlySet<string> = new Set(UNIT_KINDS);
/** Sums of fractional seconds are kept to the microsecond, so float noise never reaches a bill. */
const round = (n: number) => Math.round(n * 1e6) / 1e6;

/** A call's units by kind; rerank's billed calls are search units, realtime's audio is counted in audio tokens. */
export function usageUnitsOf(meter: UnitMeter, u: UnitUsage): UsageUnits | undefined {
  const out: UsageUnits = {};
  if (u.images > 0) out.images = u.images;
  if (u.audioSeconds > 0) out.audio_seconds = u.audioSeconds;
  if (u.characters > 0) out.characters = u.characters;
  if (u.calls > 0) out[meter === 'rerank' ? 'search_units' : 'calls'] = u.calls;
  if (meter === 'realtime') {
    const audio = u.tokens.audioIn + u.tokens.cachedAudio + u.tokens.audioOut;
    if (audio > 0) out.audio_tokens = audio;
  }
  return clean(out);
}

/** `from` added into `into` (which it changes), or a copy of `from` when there is no `into`. */
export function addUnits(into: UsageUnits | undefined, from: UsageUnits | null | undefined): UsageUnits | undefined {
  if (!from) return into;
  const out = into ?? {};
  for (const k in from) {
    const n = from[k as UnitKind]!;
    out[k as UnitKind] = round((out[k as UnitKind] ?? 0) + n);
  }
  return clean(out);
}

/** Several stored unit objects summed (a bill's rows of one group); undefined when none has any. */
export function sumUnits(list: readonly (UsageUnits | null | undefined)[] | null | undefined): UsageUnits | undefined {
  let out: UsageUnits | undefined;
  for (const u of list ?? []) out = addUnits(out, u);
  return out;
}

/** Known kinds with finite positive quantities only: what a journal replay or a caller hands in is not trusted. */
export function sanitizeUnits(u: unknown): UsageUnits | undefined {
  if (typeof u !== 'object' || u === null) return undefined;
  const out: UsageUnits = {};
  for (const [k, n] of Object.entries(u)) {
    if (KINDS.has(k) && typeof n === 'number' && Number.isFinite(n) && n > 0) out[k as UnitKind] = round(Math.min(n, 1e12));
  }
  return clean(out);
}

const clean = (u: UsageUnits) => (Object.keys(u).length > 0 ? u : undefined);
