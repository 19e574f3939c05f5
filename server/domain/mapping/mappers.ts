/**
 * Parsers for the Owner's mapper strings. Each returns a value or throws MapperError with
 * a message that names the entry, which the API turns into a 400.
 */
export class MapperError extends Error {}

export interface PatternEntry<T> {
  pattern: string;
  value: T;
}

const entries = (raw: string) => raw.split(',').map((e) => e.trim()).filter(Boolean);
const MODEL_NAME = /^[A-Za-z0-9._:/@*+-]{1,200}$/;

function splitEntry(entry: string, what: string): [string, string] {
  const i = entry.indexOf('=');
  if (i <= 0 || i === entry.length - 1) throw new MapperError(`${what}: "${entry}" is not of the form <pattern>=<value>`);
  const key = entry.slice(0, i).trim();
  const value = entry.slice(i + 1).trim();
  if (!key || !value) throw new MapperError(`${what}: "${entry}" is not of the form <pattern>=<value>`);
  return [key, value];
}

function pattern(p: string, what: string): string {
  if (!MODEL_NAME.test(p)) throw new MapperError(`${what}: "${p}" is not a valid model pattern`);
  return p;
}

function level(v: string, what: string): number {
  if (!/^\d{1,4}$/.test(v) || Number(v) > 1000) throw new MapperError(`${what}: "${v}" is not a Level (0-1000)`);
  return Number(v);
}

/** `gpt-3.5*=gpt-4o-mini, o*=gpt-4o` */
export function parseModelMapper(raw: string, what = 'MODEL_MAPPER'): PatternEntry<string>[] {
  return dedupe(entries(raw).map((e) => {
    const [k, v] = splitEntry(e, what);
    if (v.includes('*')) throw new MapperError(`${what}: target "${v}" may not contain a wildcard`);
    return { pattern: pattern(k, what), value: pattern(v, what) };
  }));
}

/** `gpt-4*=2, claude*=3` */
export function parseLevelMapper(raw: string, what = 'LEVEL_MAPPER'): PatternEntry<number>[] {
  return dedupe(entries(raw).map((e) => {
    const [k, v] = splitEntry(e, what);
    return { pattern: pattern(k, what), value: level(v, what) };
  }));
}

/** `1=2, 2=3`: primary Level = backup Level. */
export function parseSwitchOver(raw: string, what = 'SWITCH_OVER'): Map<number, number> {
  const out = new Map<number, number>();
  for (const e of entries(raw)) {
    const [k, v] = splitEntry(e, what);
    const from = level(k, what);
    const to = level(v, what);
    if (from === to) throw new MapperError(`${what}: "${e}" switches a Level to itself`);
    out.set(from, to);
  }
  return out;
}

/** `gpt-4o=gpt-4o-mini|gpt-4.1-mini, claude-*=claude-haiku-4-5`: fallbacks tried in order. */
export function parseModelFailover(raw: string, what = 'MODEL_FAILOVER'): PatternEntry<string[]>[] {
  return dedupe(entries(raw).map((e) => {
    const [k, v] = splitEntry(e, what);
    const chain = v.split('|').map((m) => m.trim());
    if (chain.some((m) => !m || m.includes('*'))) throw new MapperError(`${what}: "${e}" has an empty or wildcard fallback`);
    return { pattern: pattern(k, what), value: chain.map((m) => pattern(m, what)) };
  }));
}

/** A later entry for the same pattern replaces an earlier one. */
function dedupe<T>(list: PatternEntry<T>[]): PatternEntry<T>[] {
  const map = new Map<string, T>();
  for (const e of list) {
    map.delete(e.pattern);
    map.set(e.pattern, e.value);
  }
  return [...map].map(([p, value]) => ({ pattern: p, value }));
}

export function formatEntries<T>(list: PatternEntry<T>[], fmt: (v: T) => string = String): string {
  return list.map((e) => `${e.pattern}=${fmt(e.value)}`).join(',');
}

/** Replaces or adds `overrides` in `base`, keeping the rest: how cascades merge mappers. */
export function mergeEntries<T>(base: PatternEntry<T>[], overrides: PatternEntry<T>[]): PatternEntry<T>[] {
  const map = new Map(base.map((e) => [e.pattern, e.value]));
  for (const o of overrides) map.set(o.pattern, o.value);
  return [...map].map(([p, value]) => ({ pattern: p, value }));
}

/**
 * Looks a model up: exact entries first, then wildcard patterns, the most specific (most
 * literal characters) first, declaration order breaking ties.
 */
export class PatternTable<T> {
  private readonly exact = new Map<string, T>();
  private readonly wild: { re: RegExp; literal: number; value: T }[] = [];

  constructor(list: PatternEntry<T>[]) {
    for (const e of list) {
      if (!e.pattern.includes('*')) this.exact.set(e.pattern, e.value);
      else this.wild.push({ re: globToRegExp(e.pattern), literal: e.pattern.replace(/\*/g, '').length, value: e.value });
    }
    this.wild.sort((a, b) => b.literal - a.literal);
  }

  get size(): number {
    return this.exact.size + this.wild.length;
  }

  match(model: string): T | undefined {
    const hit = this.exact.get(model);
    if (hit !== undefined) return hit;
    for (const w of this.wild) if (w.re.test(model)) return w.value;
    return undefined;
  }
}

export function globToRegExp(glob: string): RegExp {
  return new RegExp('^' + glob.split('*').map((s) => s.replace(/[.+?^${}()|[\]\\/]/g, '\\$&')).join('.*') + '$');
}
