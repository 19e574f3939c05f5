/**
 * The Usage tab's period: what the picker holds, and the bill query (`date`, `start`/`end` or
 * `days`, contract/billing) it stands for. Days are UTC, as the server counts them.
 */
export type PeriodKind = 'today' | 'day' | 'range' | 'recent';

/** What the picker holds; `day` counts for a day, `start`/`end` for a range (both included). */
export interface PeriodDraft { kind: PeriodKind; day: string; start: string; end: string }

export type BillPeriod = { date: string } | { start: string; end: string } | { days: number };

/** Why a draft names no period: the day or a range's end is empty, outside the API's days, reversed, or too long. */
export type PeriodProblem = 'dayMissing' | 'startMissing' | 'endMissing' | 'dayOutside' | 'startOutside' | 'endOutside' | 'endBeforeStart' | 'rangeTooLong';

/** The tab opens on the last 30 days (today included), as it always did. */
export const RECENT_DAYS = 30;
/** The longest period a bill covers: contract/billing's MAX_BILL_DAYS (a test keeps the two equal; the value is not imported, so zod stays out of the console bundle). */
export const MAX_RANGE_DAYS = 366;
/** The days a bill may name (contract/billing FIRST_BILL_DAY, LAST_BILL_DAY). */
export const FIRST_DAY = '1970-01-01';
export const LAST_DAY = '9999-12-31';

const DAY_MS = 86_400_000;

/** The UTC day `back` days before `now`, as YYYY-MM-DD. */
export const utcDay = (now: Date, back = 0): string => new Date(now.getTime() - back * DAY_MS).toISOString().slice(0, 10);

/** A real calendar day (not `2025-02-30`) the API accepts. */
export function isBillDay(s: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(s)) return false;
  const d = new Date(`${s}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s && s >= FIRST_DAY && s <= LAST_DAY;
}

/** Days from `start` to `end`, both included. */
export const daysIn = (start: string, end: string): number => Math.round((Date.parse(`${end}T00:00:00Z`) - Date.parse(`${start}T00:00:00Z`)) / DAY_MS) + 1;

/**
 * The bill query a draft stands for, or the first reason it stands for none. Today is `days: 1`:
 * the server's today, which `/dashboard/live`'s daily usage also counts.
 */
export function periodOf(d: PeriodDraft): { query: BillPeriod } | { problem: PeriodProblem } {
  switch (d.kind) {
    case 'today': return { query: { days: 1 } };
    case 'recent': return { query: { days: RECENT_DAYS } };
    case 'day':
      if (!d.day) return { problem: 'dayMissing' };
      return isBillDay(d.day) ? { query: { date: d.day } } : { problem: 'dayOutside' };
    case 'range':
      if (!d.start) return { problem: 'startMissing' };
      if (!isBillDay(d.start)) return { problem: 'startOutside' };
      if (!d.end) return { problem: 'endMissing' };
      if (!isBillDay(d.end)) return { problem: 'endOutside' };
      if (d.end < d.start) return { problem: 'endBeforeStart' };
      if (daysIn(d.start, d.end) > MAX_RANGE_DAYS) return { problem: 'rangeTooLong' };
      return { query: { start: d.start, end: d.end } };
  }
}

/** The field a problem belongs to, where the picker shows it. */
export const problemField = (p: PeriodProblem): 'day' | 'start' | 'end' =>
  p === 'dayMissing' || p === 'dayOutside' ? 'day' : p === 'startMissing' || p === 'startOutside' ? 'start' : 'end';

/**
 * The draft on picking another kind: a day or a range not set yet starts filled
 * (today; the last 7 days), so every pick shows figures at once.
 */
export function withKind(d: PeriodDraft, kind: PeriodKind, now: Date): PeriodDraft {
  return {
    ...d,
    kind,
    day: d.day || utcDay(now),
    start: d.start || utcDay(now, 6),
    end: d.end || utcDay(now),
  };
}
