import { LOCALE } from '../locale';

const dateTime = new Intl.DateTimeFormat(LOCALE, { year: 'numeric', month: 'short', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' });
const integer = new Intl.NumberFormat(LOCALE, { maximumFractionDigits: 0 });
const compact = new Intl.NumberFormat(LOCALE, { notation: 'compact', maximumFractionDigits: 1 });
const decimal = new Intl.NumberFormat(LOCALE, { maximumFractionDigits: 2 });

export function formatTime(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : dateTime.format(d);
}

export const formatInt = (n: number) => integer.format(n);
export const formatCompact = (n: number) => compact.format(n);

/** Credit is USD; small amounts keep enough digits to not read as zero. */
export function formatCredit(n: number): string {
  const digits = n !== 0 && Math.abs(n) < 0.01 ? 4 : 2;
  return '$' + n.toLocaleString(LOCALE, { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** `2026-11-02` → `Nov 2`, read as a UTC day like the server's. */
export function formatDay(day: string): string {
  const d = new Date(day + 'T00:00:00Z');
  return Number.isNaN(d.getTime()) ? day : d.toLocaleDateString(LOCALE, { month: 'short', day: 'numeric', timeZone: 'UTC' });
}

/** The gateway's unit kinds (contract's UsageUnits) as read: one, many. */
const UNIT_NAMES: Record<string, [string, string]> = {
  images: ['image', 'images'],
  audio_seconds: ['s of audio', 's of audio'],
  characters: ['character', 'characters'],
  calls: ['call', 'calls'],
  search_units: ['search unit', 'search units'],
  audio_tokens: ['audio token', 'audio tokens'],
};

/** What a call billed by its route's own unit used, e.g. `2 images`; a kind not known here reads by its name. */
export function formatUnits(units: Record<string, number> | undefined): string {
  const order = (kind: string) => (kind in UNIT_NAMES ? Object.keys(UNIT_NAMES).indexOf(kind) : Infinity);
  const used = Object.entries(units ?? {}).filter(([, n]) => n > 0).sort(([a], [b]) => order(a) - order(b));
  const parts = used.map(([kind, n]) => {
    const [one, many] = UNIT_NAMES[kind] ?? [kind.replace(/_/g, ' '), kind.replace(/_/g, ' ')];
    return `${decimal.format(n)} ${n === 1 ? one : many}`;
  });
  return parts.length ? parts.join(', ') : '–';
}
