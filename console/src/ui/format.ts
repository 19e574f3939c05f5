import { intlLocale, t, tn } from '../i18n';

/**
 * Numbers, money and dates in the console's current language (i18n/index.ts `intlLocale`): each
 * function reads the language when called, so what a component shows follows the switch.
 * Formatters are made once per locale and options.
 */
const cache = new Map<string, Intl.NumberFormat | Intl.DateTimeFormat>();
function numberFormat(options: Intl.NumberFormatOptions): Intl.NumberFormat {
  const locale = intlLocale();
  const key = `n|${locale}|${JSON.stringify(options)}`;
  let f = cache.get(key) as Intl.NumberFormat | undefined;
  if (!f) cache.set(key, (f = new Intl.NumberFormat(locale, options)));
  return f;
}
function dateFormat(options: Intl.DateTimeFormatOptions): Intl.DateTimeFormat {
  const locale = intlLocale();
  const key = `d|${locale}|${JSON.stringify(options)}`;
  let f = cache.get(key) as Intl.DateTimeFormat | undefined;
  if (!f) cache.set(key, (f = new Intl.DateTimeFormat(locale, options)));
  return f;
}

export function formatTime(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : dateFormat({ year: 'numeric', month: 'short', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' }).format(d);
}

export const formatInt = (n: number) => numberFormat({ maximumFractionDigits: 0 }).format(n);
export const formatCompact = (n: number) => numberFormat({ notation: 'compact', maximumFractionDigits: 1 }).format(n);
const formatDecimal = (n: number) => numberFormat({ maximumFractionDigits: 2 }).format(n);

/** A share given in percent (`12.5` reads 12.5%), to one decimal. */
export const formatPercent = (n: number) => numberFormat({ style: 'percent', maximumFractionDigits: 1 }).format(n / 100);

/** A time given in milliseconds, in the unit that reads best and as the language writes it: `850 ms`, `1.25 s`, `12.4 min`. */
export function formatMs(n: number): string {
  const unit = (u: 'millisecond' | 'second' | 'minute', digits: number) => numberFormat({ style: 'unit', unit: u, unitDisplay: 'short', maximumFractionDigits: digits });
  if (Math.abs(n) < 1000) return unit('millisecond', 0).format(n);
  if (Math.abs(n) < 60_000) return unit('second', Math.abs(n) < 10_000 ? 2 : 1).format(n / 1000);
  return unit('minute', 1).format(n / 60_000);
}

/** The smallest amount of money the console shows; anything closer to zero reads `< $0.0001`. */
const MONEY_FLOOR = 0.0001;
const usd = (n: number, fractionDigits: number, minimumFractionDigits = 2) =>
  numberFormat({ style: 'currency', currency: 'USD', minimumFractionDigits, maximumFractionDigits: fractionDigits }).format(n);

/**
 * Money (credit is USD), the same on every page: cents, or for an amount below a cent as many
 * digits as make it non-zero (up to four); a positive amount below $0.0001 reads `< $0.0001`, so
 * a call that cost a fraction of that never reads $0.0000. `axis`: a chart's tick, where two ticks
 * a little apart must differ: small values keep two significant digits instead. `price`: a unit
 * price, shown with as many decimals as it has, up to six (cents at least).
 */
export function formatMoney(n: number, opts: { axis?: boolean; price?: boolean } = {}): string {
  const size = Math.abs(n);
  // A unit price (per 1M tokens, per call): $1.875 must not read $1.88, so up to six decimals.
  if (opts.price && size >= MONEY_FLOOR) return usd(n, 6);
  if (n === 0 || size >= 0.01) return usd(n, 2);
  if (opts.axis) return numberFormat({ style: 'currency', currency: 'USD', maximumSignificantDigits: 2 }).format(n);
  if (size < MONEY_FLOOR) return n > 0 ? t('format.moneyBelow', { amount: usd(MONEY_FLOOR, 4) }) : t('format.moneyAbove', { amount: usd(-MONEY_FLOOR, 4) });
  return usd(n, 4);
}

/** `2026-11-02` → `Nov 2, 2026`, read as a UTC day like the server's. */
export function formatDay(day: string): string {
  const d = new Date(day + 'T00:00:00Z');
  return Number.isNaN(d.getTime()) ? day : dateFormat({ year: 'numeric', month: 'short', day: 'numeric', timeZone: 'UTC' }).format(d);
}

/** A chart's x: a UTC day (`Nov 2, 2026`) or an hour (`Nov 2, 14:00 UTC`), from seconds since the epoch. */
export function formatChartTime(sec: number, step: 'day' | 'hour'): string {
  const options: Intl.DateTimeFormatOptions = step === 'day'
    ? { year: 'numeric', month: 'short', day: 'numeric', timeZone: 'UTC' }
    : { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZone: 'UTC', timeZoneName: 'short' };
  return dateFormat(options).format(new Date(sec * 1000));
}

/**
 * A tick of a chart's time axis, `incr` seconds from the next: the day (`Nov 2`) when ticks are a
 * day or more apart, else the hour, with its day on the first tick and at midnight.
 */
export function formatAxisTime(sec: number, incr: number, first: boolean): string {
  const day: Intl.DateTimeFormatOptions = { month: 'short', day: 'numeric', timeZone: 'UTC' };
  const hour: Intl.DateTimeFormatOptions = { hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZone: 'UTC' };
  const d = new Date(sec * 1000);
  if (incr >= 86_400) return dateFormat(day).format(d);
  return dateFormat(first || sec % 86_400 === 0 ? { ...day, ...hour } : hour).format(d);
}

/** The gateway's unit kinds (contract's UsageUnits), in the order they are listed. */
const UNIT_KINDS = ['images', 'audio_seconds', 'characters', 'calls', 'search_units', 'audio_tokens'] as const;
type UnitKind = (typeof UNIT_KINDS)[number];
const isKnown = (kind: string): kind is UnitKind => (UNIT_KINDS as readonly string[]).includes(kind);

/** What a call billed by its route's own unit used, e.g. `2 images`; a kind not known here reads by its name. */
export function formatUnits(units: Record<string, number> | undefined): string {
  const order = (kind: string) => (isKnown(kind) ? UNIT_KINDS.indexOf(kind) : Infinity);
  const used = Object.entries(units ?? {}).filter(([, n]) => n > 0).sort(([a], [b]) => order(a) - order(b));
  const parts = used.map(([kind, n]) =>
    isKnown(kind) ? tn(`format.units.${kind}`, n, { n: formatDecimal(n) }) : t('format.unknownUnit', { n: formatDecimal(n), unit: kind.replace(/_/g, ' ') }));
  return parts.length ? parts.join(t('format.listSeparator')) : '–';
}
