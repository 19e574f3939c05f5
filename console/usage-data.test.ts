import { describe, expect, it } from 'vitest';
import { BillQuery, FIRST_BILL_DAY, LAST_BILL_DAY, MAX_BILL_DAYS, type BillInfo, type DescendantBillInfo, type UsageUser } from '../contract/billing/schemas';
import type { PeriodUsage } from '../contract/dashboard/schemas';
import { batchTotals, billOfDay, billsFor, dailyTotals, modelTotals, periodTotals, subaccountSpend } from './src/tabs/usage-data';
import { daysIn, FIRST_DAY, isBillDay, LAST_DAY, MAX_RANGE_DAYS, periodOf, problemField, utcDay, withKind, type PeriodDraft } from './src/tabs/usage-period';

/** The Usage tab's pure parts: the figures it sums from bills and live usage, and the periods it asks for. */
const now = new Date();
const today = utcDay(now);
const daysAgo = (n: number) => utcDay(now, n);

const stats = (requests: number, credit: number, prompt = 100 * requests, completion = 10 * requests) =>
  ({ Requests: requests, Prompt: prompt, Completion: completion, Reasoning: 0, Cached: 0, CreditUsed: credit });

/** A bill over `days` (date → [requests, credit]) with `models` (name → [requests, credit]). */
function bill(days: Record<string, [number, number]>, models: Record<string, [number, number]>): BillInfo {
  const dates = Object.keys(days).sort();
  const daily = dates.map((date) => ({
    date, timestamp: Date.parse(`${date}T00:00:00Z`) / 1000, total_requests: days[date][0], total_prompt: 0, total_completion: 0,
    total_reasoning: 0, total_credit_used: days[date][1], line_items: [],
  }));
  const usage_summary: BillInfo['usage_summary'] = {};
  for (const [name, [r, c]] of Object.entries(models)) {
    usage_summary[name] = {
      model_stats: stats(r, c), usage_analysis: { request_percentage: 0, cost_percentage: 0 },
      ...(name.endsWith(' (batch)') ? { batch: true, model: name.slice(0, -8) } : {}),
    };
  }
  const requests = Object.values(models).reduce((n, [r]) => n + r, 0);
  return {
    object: 'bill_info', start_date: dates[0], end_date: dates[dates.length - 1], daily_costs: daily, usage_summary,
    total_requests: requests, total_prompt: 100 * requests, total_completion: 10 * requests, total_reasoning: 0,
    total_credit_used: Object.values(models).reduce((n, [, c]) => n + c, 0),
    token_summary: { input_total: 100 * requests, cached_input: 0, uncached_input: 100 * requests, output_total: 10 * requests, reasoning_output: 0, processed_total: 110 * requests },
  };
}

const user = (id: number, name: string, alias: string, requests: number, credit: number): UsageUser => ({
  id, name, alias, email: `${name}@example.test`, dna: `.1.${id}.`, top_cost_model: 'gpt-4o', top_request_model: 'gpt-4o',
  total_requests: requests, total_prompt: 0, total_completion: 0, total_reasoning: 0, total_credit_used: credit,
  usage_analysis: { request_percentage: 0, cost_percentage: 0 },
});

describe('the figures of bills', () => {
  const own = bill({ [daysAgo(1)]: [2, 0.1], [today]: [1, 0.05] }, { 'gpt-4o': [3, 0.15] });
  const below: DescendantBillInfo = {
    ...bill({ [daysAgo(1)]: [12, 0.05], [today]: [0, 0] }, { 'gpt-4o': [2, 0.02], 'claude-sonnet-4-5': [7, 0.02], 'gpt-4o (batch)': [3, 0.01] }),
    usage_users: [user(7, 'bakery', '', 3, 0.01), user(5, 'cafe', 'Cafe', 9, 0.04), user(9, 'deli', 'Deli', 0, 0)],
  };

  it('adds the chosen bills day by day and model by model, credit summed as the server rounds it', () => {
    expect(dailyTotals([own, below])).toEqual([{ date: daysAgo(1), requests: 14, credit: 0.15 }, { date: today, requests: 1, credit: 0.05 }]);
    // Twelve times $0.05 is $0.60, not 0.6000000000000001.
    const twelve = Array.from({ length: 12 }, () => bill({ [today]: [1, 0.05] }, { 'gpt-4o': [1, 0.05] }));
    expect(dailyTotals(twelve)[0].credit).toBe(0.6);
    expect(periodTotals(twelve)).toEqual({ requests: 12, credit: 0.6, tokens: 12 * 110 });
    expect(modelTotals(twelve)).toEqual([{ model: 'gpt-4o', requests: 12, credit: 0.6, tokens: 12 * 110 }]);
  });

  it('lists models by credit, then requests, then name; a limit keeps the first', () => {
    const all = modelTotals([own, below]);
    expect(all.map((m) => [m.model, m.requests, m.credit])).toEqual([['gpt-4o', 5, 0.17], ['claude-sonnet-4-5', 7, 0.02], ['gpt-4o (batch)', 3, 0.01]]);
    expect(all[0].tokens).toBe(5 * 110);
    expect(modelTotals([own, below], 1).map((m) => m.model)).toEqual(['gpt-4o']);
    expect(batchTotals([own, below])).toEqual({ requests: 3, credit: 0.01 });
    expect(batchTotals([own])).toEqual({ requests: 0, credit: 0 });
  });

  it('picks the bills of a scope; without a descendants\' bill only the own one', () => {
    expect(billsFor('all', own, below)).toEqual([own, below]);
    expect(billsFor('own', own, below)).toEqual([own]);
    expect(billsFor('descendants', own, below)).toEqual([below]);
    expect(billsFor('all', own, null)).toEqual([own]);
    expect(billsFor('descendants', own, null)).toEqual([own]);
  });

  it('lists subaccounts by credit, then requests, by Alias else Name', () => {
    expect(subaccountSpend(below.usage_users)).toEqual([
      { id: 5, name: 'Cafe', requests: 9, credit: 0.04 },
      { id: 7, name: 'bakery', requests: 3, credit: 0.01 },
      { id: 9, name: 'Deli', requests: 0, credit: 0 },
    ]);
    expect(subaccountSpend([user(3, 'a', '', 1, 0.5), user(2, 'b', '', 4, 0.5), user(1, 'c', '', 4, 0.5)]).map((u) => u.id)).toEqual([1, 2, 3]);
  });
});

describe('today\'s live usage as a one-day bill', () => {
  const live: PeriodUsage = {
    Requests: 5, Prompt: 900, Completion: 90, Reasoning: 4, Cached: 100, CreditUsed: 0.35,
    ModelUsage: { 'gpt-4o': stats(2, 0.3, 600, 60), 'gpt-4o-mini': stats(1, 0, 100, 10), 'gpt-4o (batch)': stats(2, 0.05, 200, 20) },
    Batch: stats(2, 0.05, 200, 20),
  };

  it('carries the same totals, per model and per day, its batches marked as a bill marks them', () => {
    const b = billOfDay(live, today);
    expect(b).toMatchObject({ start_date: today, end_date: today, total_requests: 5, total_credit_used: 0.35 });
    expect(b.daily_costs).toEqual([expect.objectContaining({ date: today, timestamp: Date.parse(`${today}T00:00:00Z`) / 1000, total_requests: 5, total_credit_used: 0.35 })]);
    expect(b.token_summary).toEqual({ input_total: 900, cached_input: 100, uncached_input: 800, output_total: 90, reasoning_output: 4, processed_total: 990 });
    expect(b.usage_summary['gpt-4o (batch)']).toMatchObject({ batch: true, model: 'gpt-4o' });
    expect(b.usage_summary['gpt-4o'].batch).toBeUndefined();
    expect(b.usage_summary['gpt-4o'].usage_analysis).toEqual({ request_percentage: 40, cost_percentage: 85.71 });
    expect(batchTotals([b])).toEqual({ requests: 2, credit: 0.05 });
    expect(periodTotals([b])).toEqual({ requests: 5, credit: 0.35, tokens: 990 });
    expect(dailyTotals([b])).toEqual([{ date: today, requests: 5, credit: 0.35 }]);
  });

  it('reads zeros on a day without usage', () => {
    const b = billOfDay({ Requests: 0, Prompt: 0, Completion: 0, Reasoning: 0, Cached: 0, CreditUsed: 0, ModelUsage: {} }, today);
    expect(modelTotals([b])).toEqual([]);
    expect(periodTotals([b])).toEqual({ requests: 0, credit: 0, tokens: 0 });
  });
});

describe('the period picked', () => {
  const draft = (over: Partial<PeriodDraft>): PeriodDraft => ({ kind: 'recent', day: '', start: '', end: '', ...over });

  it('asks for today, the last 30 days, one day or a range, in the API\'s own terms', () => {
    expect(periodOf(draft({ kind: 'today' }))).toEqual({ query: { days: 1 } });
    expect(periodOf(draft({ kind: 'recent' }))).toEqual({ query: { days: 30 } });
    expect(periodOf(draft({ kind: 'day', day: daysAgo(3) }))).toEqual({ query: { date: daysAgo(3) } });
    expect(periodOf(draft({ kind: 'range', start: daysAgo(6), end: daysAgo(2) }))).toEqual({ query: { start: daysAgo(6), end: daysAgo(2) } });
    expect(periodOf(draft({ kind: 'range', start: today, end: today }))).toEqual({ query: { start: today, end: today } });
    // What it asks for is what the API takes.
    for (const kind of ['today', 'recent', 'day', 'range'] as const) {
      const p = periodOf(withKind(draft({}), kind, now));
      expect('query' in p && BillQuery.safeParse(p.query).success, kind).toBe(true);
    }
  });

  it('refuses a missing day, a reversed range and one longer than the API allows, under the field concerned', () => {
    expect(periodOf(draft({ kind: 'day' }))).toEqual({ problem: 'dayMissing' });
    expect(periodOf(draft({ kind: 'range', end: today }))).toEqual({ problem: 'startMissing' });
    expect(periodOf(draft({ kind: 'range', start: today }))).toEqual({ problem: 'endMissing' });
    expect(periodOf(draft({ kind: 'range', start: daysAgo(2), end: daysAgo(3) }))).toEqual({ problem: 'endBeforeStart' });
    expect(periodOf(draft({ kind: 'range', start: daysAgo(MAX_RANGE_DAYS - 1), end: today }))).toEqual({ query: { start: daysAgo(MAX_RANGE_DAYS - 1), end: today } });
    expect(periodOf(draft({ kind: 'range', start: daysAgo(MAX_RANGE_DAYS), end: today }))).toEqual({ problem: 'rangeTooLong' });
    // fixed-date: the calendar's bounds and an impossible day, read without a clock.
    expect(periodOf(draft({ kind: 'day', day: '1969-12-31' }))).toEqual({ problem: 'dayOutside' });
    // fixed-date: a day no calendar has.
    expect(periodOf(draft({ kind: 'range', start: '2025-02-30', end: today }))).toEqual({ problem: 'startOutside' });
    // fixed-date: a five-digit year a date input lets one type.
    expect(periodOf(draft({ kind: 'range', start: today, end: '10000-01-01' }))).toEqual({ problem: 'endOutside' });
    expect(problemField('dayMissing')).toBe('day');
    expect(problemField('startOutside')).toBe('start');
    expect(problemField('endBeforeStart')).toBe('end');
    expect(problemField('rangeTooLong')).toBe('end');
  });

  it('keeps the API\'s bounds: the longest period and the first and last days', () => {
    expect(MAX_RANGE_DAYS).toBe(MAX_BILL_DAYS);
    expect([FIRST_DAY, LAST_DAY]).toEqual([FIRST_BILL_DAY, LAST_BILL_DAY]);
    expect(isBillDay(FIRST_DAY) && isBillDay(LAST_DAY)).toBe(true);
    expect(BillQuery.safeParse({ start: daysAgo(MAX_RANGE_DAYS), end: today }).success).toBe(true);
  });

  it('counts a range\'s days with both ends, and reads days in UTC', () => {
    expect(daysIn(today, today)).toBe(1);
    expect(daysIn(daysAgo(6), today)).toBe(7);
    expect(utcDay(now)).toBe(now.toISOString().slice(0, 10));
    expect(utcDay(now, 1)).toBe(new Date(now.getTime() - 86_400_000).toISOString().slice(0, 10));
  });

  it('starts a day at today and a range at the last 7 days, and keeps what was picked before', () => {
    expect(withKind(draft({}), 'day', now)).toEqual({ kind: 'day', day: today, start: daysAgo(6), end: today });
    const picked = draft({ kind: 'range', start: daysAgo(20), end: daysAgo(10) });
    expect(withKind(withKind(picked, 'today', now), 'range', now)).toEqual({ ...picked, day: today });
  });
});
