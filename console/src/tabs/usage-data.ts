import type { BillInfo, DescendantBillInfo, UsageUser } from '../../../contract/billing/schemas';
import type { PeriodUsage } from '../../../contract/dashboard/schemas';

export type Scope = 'all' | 'own' | 'descendants';
export interface DayTotals { date: string; requests: number; credit: number }
export interface ModelTotals { model: string; requests: number; credit: number; tokens: number }
export interface BatchTotals { requests: number; credit: number }
export interface SubaccountSpend { id: number; name: string; requests: number; credit: number }

/** Sums of credit as the server rounds them (admin/billing/bill.ts `credit`), so $0.05 twelve times reads $0.60 exactly. */
const money = (x: number) => Number(x.toFixed(10));

/** Adds the Owner's own bill and its descendants' bill day by day (both cover the same UTC days). */
export function dailyTotals(bills: BillInfo[]): DayTotals[] {
  const byDay = new Map<string, DayTotals>();
  for (const bill of bills) {
    for (const d of bill.daily_costs) {
      const t = byDay.get(d.date) ?? { date: d.date, requests: 0, credit: 0 };
      t.requests += d.total_requests;
      t.credit = money(t.credit + d.total_credit_used);
      byDay.set(d.date, t);
    }
  }
  return [...byDay.values()].sort((a, b) => a.date.localeCompare(b.date));
}

/** Per model over the period, most credit first (then most requests); `limit` keeps the first ones. */
export function modelTotals(bills: BillInfo[], limit = Infinity): ModelTotals[] {
  const byModel = new Map<string, ModelTotals>();
  for (const bill of bills) {
    for (const [model, { model_stats: s }] of Object.entries(bill.usage_summary)) {
      const t = byModel.get(model) ?? { model, requests: 0, credit: 0, tokens: 0 };
      t.requests += s.Requests;
      t.credit = money(t.credit + s.CreditUsed);
      t.tokens += s.Prompt + s.Completion;
      byModel.set(model, t);
    }
  }
  return [...byModel.values()].sort((a, b) => b.credit - a.credit || b.requests - a.requests || a.model.localeCompare(b.model)).slice(0, limit);
}

/** What provider batches used (the bills' `batch` entries, each line a request), apart from calls. */
export function batchTotals(bills: BillInfo[]): BatchTotals {
  const t: BatchTotals = { requests: 0, credit: 0 };
  for (const bill of bills) {
    for (const s of Object.values(bill.usage_summary)) {
      if (!s.batch) continue;
      t.requests += s.model_stats.Requests;
      t.credit = money(t.credit + s.model_stats.CreditUsed);
    }
  }
  return t;
}

/** The period's totals of the chosen bills. */
export function periodTotals(bills: BillInfo[]): { requests: number; credit: number; tokens: number } {
  return bills.reduce((t, b) => ({
    requests: t.requests + b.total_requests,
    credit: money(t.credit + b.total_credit_used),
    tokens: t.tokens + b.token_summary.processed_total,
  }), { requests: 0, credit: 0, tokens: 0 });
}

/** An account without manage permission has no descendants' bill: its own is all there is. */
export function billsFor(scope: Scope, own: BillInfo, descendants: DescendantBillInfo | null): BillInfo[] {
  if (!descendants) return [own];
  return scope === 'own' ? [own] : scope === 'descendants' ? [descendants] : [own, descendants];
}

/** `/x-bill`'s accounts, most credit first (then most requests), by the name the console shows (Alias, else Name). */
export function subaccountSpend(users: UsageUser[]): SubaccountSpend[] {
  return users
    .map((u) => ({ id: u.id, name: u.alias || u.name, requests: u.total_requests, credit: u.total_credit_used }))
    .sort((a, b) => b.credit - a.credit || b.requests - a.requests || a.id - b.id);
}

/**
 * Today's usage of `/dashboard/live` as a one-day bill, so the live figures go through the same
 * sums, charts and tables as a bill's. Its per-model rows name a model's provider batches
 * `<model> (batch)`, as a bill's usage_summary does (server/domain/usage/batch-usage.ts).
 */
export function billOfDay(usage: PeriodUsage, date: string): BillInfo {
  const MARK = ' (batch)';
  const usage_summary: BillInfo['usage_summary'] = {};
  for (const [key, m] of Object.entries(usage.ModelUsage)) {
    const batch = key.endsWith(MARK) && key.length > MARK.length;
    usage_summary[key] = {
      model_stats: { Requests: m.Requests, Prompt: m.Prompt, Completion: m.Completion, Reasoning: m.Reasoning, Cached: m.Cached, CreditUsed: m.CreditUsed },
      usage_analysis: { request_percentage: share(m.Requests, usage.Requests), cost_percentage: share(m.CreditUsed, usage.CreditUsed) },
      ...(batch ? { batch: true, model: key.slice(0, -MARK.length) } : {}),
    };
  }
  return {
    object: 'bill_info',
    start_date: date,
    end_date: date,
    daily_costs: [{
      date, timestamp: Date.parse(`${date}T00:00:00Z`) / 1000, total_requests: usage.Requests, total_prompt: usage.Prompt,
      total_completion: usage.Completion, total_reasoning: usage.Reasoning, total_credit_used: usage.CreditUsed, line_items: [],
    }],
    usage_summary,
    total_requests: usage.Requests,
    total_prompt: usage.Prompt,
    total_completion: usage.Completion,
    total_reasoning: usage.Reasoning,
    total_credit_used: usage.CreditUsed,
    token_summary: {
      input_total: usage.Prompt, cached_input: usage.Cached, uncached_input: usage.Prompt - usage.Cached,
      output_total: usage.Completion, reasoning_output: usage.Reasoning, processed_total: usage.Prompt + usage.Completion,
    },
  };
}

/** Percent to two decimals, as the server's bills give it. */
const share = (part: number, whole: number) => (whole > 0 ? Number(((part / whole) * 100).toFixed(2)) : 0);
