import type { BillInfo, DescendantBillInfo } from '../../../contract/billing/schemas';

export type Scope = 'all' | 'own' | 'descendants';
export interface DayTotals { date: string; requests: number; credit: number }
export interface ModelTotals { model: string; requests: number; credit: number; tokens: number }
export interface BatchTotals { requests: number; credit: number }

/** Adds the Owner's own bill and its descendants' bill day by day (both cover the same UTC days). */
export function dailyTotals(bills: BillInfo[]): DayTotals[] {
  const byDay = new Map<string, DayTotals>();
  for (const bill of bills) {
    for (const d of bill.daily_costs) {
      const t = byDay.get(d.date) ?? { date: d.date, requests: 0, credit: 0 };
      t.requests += d.total_requests;
      t.credit += d.total_credit_used;
      byDay.set(d.date, t);
    }
  }
  return [...byDay.values()].sort((a, b) => a.date.localeCompare(b.date));
}

export function modelTotals(bills: BillInfo[], limit: number): ModelTotals[] {
  const byModel = new Map<string, ModelTotals>();
  for (const bill of bills) {
    for (const [model, { model_stats: s }] of Object.entries(bill.usage_summary)) {
      const t = byModel.get(model) ?? { model, requests: 0, credit: 0, tokens: 0 };
      t.requests += s.Requests;
      t.credit += s.CreditUsed;
      t.tokens += s.Prompt + s.Completion;
      byModel.set(model, t);
    }
  }
  return [...byModel.values()].sort((a, b) => b.credit - a.credit || b.requests - a.requests).slice(0, limit);
}

/** What provider batches used (the bills' `batch` entries, each line a request), apart from calls. */
export function batchTotals(bills: BillInfo[]): BatchTotals {
  const t: BatchTotals = { requests: 0, credit: 0 };
  for (const bill of bills) {
    for (const s of Object.values(bill.usage_summary)) {
      if (!s.batch) continue;
      t.requests += s.model_stats.Requests;
      t.credit += s.model_stats.CreditUsed;
    }
  }
  return t;
}

export function billsFor(scope: Scope, own: BillInfo, descendants: DescendantBillInfo): BillInfo[] {
  return scope === 'own' ? [own] : scope === 'descendants' ? [descendants] : [own, descendants];
}
