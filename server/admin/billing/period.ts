import { badRequest } from '../../../contract/errors';
import { MAX_BILL_DAYS, type BillQuery } from '../../../contract/billing/schemas';

/** A run of UTC days, both ends included, as YYYY-MM-DD. */
export interface Period {
  start: string;
  end: string;
}

const DAY_MS = 86_400_000;
/** Days since 1970-01-01 of a YYYY-MM-DD day: an integer, since every day starts at a whole number of days in UTC. */
const dayNumber = (day: string) => Date.parse(`${day}T00:00:00Z`) / DAY_MS;
const dayOf = (n: number) => new Date(n * DAY_MS).toISOString().slice(0, 10);

export const today = (now = new Date()) => now.toISOString().slice(0, 10);
export const addDays = (day: string, n: number) => dayOf(dayNumber(day) + n);
/** Days from start to end, both included (1 for one day). */
export const daysBetween = (start: string, end: string) => dayNumber(end) - dayNumber(start) + 1;

/**
 * Every day of a period, oldest first. A counted loop, never a comparison of formatted days:
 * after 9999-12-31 comes `+010000-01-01`, which sorts before it. A period outside 1 to
 * MAX_BILL_DAYS days is a programming error (resolvePeriod never makes one), not a long loop.
 */
export function eachDay(p: Period): string[] {
  const first = dayNumber(p.start);
  const count = daysBetween(p.start, p.end);
  if (!Number.isSafeInteger(count) || count < 1 || count > MAX_BILL_DAYS) throw new RangeError(`a bill period covers 1 to ${MAX_BILL_DAYS} days, not ${count} (${p.start}..${p.end})`);
  return Array.from({ length: count }, (_, i) => dayOf(first + i));
}

/** One value of a parameter that has aliases; two aliases sent at once are ambiguous. */
function one(q: Record<string, string | undefined>, names: string[]): string | undefined {
  const sent = names.filter((n) => q[n] !== undefined);
  if (sent.length > 1) throw badRequest(`${sent.join(' and ')}: send only one of ${names.join(', ')}`);
  return sent.length ? q[sent[0]] : undefined;
}

/**
 * The bill's period from `date|d`, `start|s|start_date` + `end|e|end_date`, or `days`;
 * nothing means today. Mixed forms, a reversed range or one longer than MAX_BILL_DAYS are 400.
 */
export function resolvePeriod(q: BillQuery, now = new Date()): Period {
  const strings = q as Record<string, string | undefined>;
  const date = one(strings, ['date', 'd']);
  const start = one(strings, ['start', 's', 'start_date']);
  const end = one(strings, ['end', 'e', 'end_date']);
  const days = q.days;
  const forms = [date !== undefined && 'date', (start !== undefined || end !== undefined) && 'start/end', days !== undefined && 'days'].filter(Boolean);
  if (forms.length > 1) throw badRequest(`${forms.join(' and ')}: choose one way to give the period (date, start/end or days)`);
  const current = today(now);
  if (date !== undefined) return { start: date, end: date };
  if (days !== undefined) return { start: addDays(current, -(days - 1)), end: current };
  if (end !== undefined && start === undefined) throw badRequest('end: needs start (the first day of the range)');
  if (start !== undefined) {
    const last = end ?? current;
    if (start > last) throw badRequest(`start: ${start} is after ${end !== undefined ? 'end' : 'today'} (${last})`);
    const n = daysBetween(start, last);
    if (!(n <= MAX_BILL_DAYS)) throw badRequest(`start/end: the range covers ${n} days; at most ${MAX_BILL_DAYS}`);
    return { start, end: last };
  }
  return { start: current, end: current };
}
