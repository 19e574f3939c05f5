import type { BillInfo, DailyCost, UsageUser } from '../../../contract/billing/schemas';
import { eachDay, type Period } from './period';
import { addUnits, type UsageUnits } from '../../domain/usage/units';
import { fromRollupModel } from '../../domain/usage/batch-usage';

/** Summed usage_daily figures of one group (a day and model, an account and model, …). */
export interface UsageSums {
  requests: number;
  prompt: number;
  completion: number;
  reasoning: number;
  cached: number;
  credit: number;
  /** Units of unit-billed routes by kind; absent when there are none. */
  units?: UsageUnits;
}

export const credit = (x: number) => Number(x.toFixed(10));
/** A rollup key's batch fields: a provider batches' line says so and names its model; a call's line is as it was. */
function batchOf(name: string): { batch?: true; model?: string } {
  const k = fromRollupModel(name);
  return k.batch ? { batch: true, model: k.model } : {};
}
const percent = (part: number, whole: number) => (whole > 0 ? Number(((part / whole) * 100).toFixed(2)) : 0);
const zero = (): UsageSums => ({ requests: 0, prompt: 0, completion: 0, reasoning: 0, cached: 0, credit: 0 });
function add(into: UsageSums, s: UsageSums): void {
  into.requests += s.requests;
  into.prompt += s.prompt;
  into.completion += s.completion;
  into.reasoning += s.reasoning;
  into.cached += s.cached;
  into.credit += s.credit;
  if (s.units) into.units = addUnits(into.units, s.units);
}

/** bill_info from per (day, model) sums: every day of the period, oldest first, zeros included. */
export function buildBill(period: Period, rows: (UsageSums & { day: string; model: string })[]): BillInfo {
  const byDay = new Map<string, (UsageSums & { model: string })[]>();
  const byModel = new Map<string, UsageSums>();
  const total = zero();
  for (const r of rows) {
    let list = byDay.get(r.day);
    if (!list) byDay.set(r.day, (list = []));
    list.push(r);
    let m = byModel.get(r.model);
    if (!m) byModel.set(r.model, (m = zero()));
    add(m, r);
    add(total, r);
  }
  const daily_costs: DailyCost[] = eachDay(period).map((date) => {
    const items = (byDay.get(date) ?? []).sort((a, b) => b.credit - a.credit || a.model.localeCompare(b.model));
    const day = zero();
    for (const i of items) add(day, i);
    return {
      date,
      timestamp: Date.parse(`${date}T00:00:00Z`) / 1000,
      total_requests: day.requests,
      total_prompt: day.prompt,
      total_completion: day.completion,
      total_reasoning: day.reasoning,
      total_credit_used: credit(day.credit),
      line_items: items.map((i) => ({
        name: i.model,
        cost: credit(i.credit),
        usage: { requests: i.requests, prompt: i.prompt, completion: i.completion, reasoning: i.reasoning, cached: i.cached, ...(i.units ? { units: i.units } : {}) },
        ...batchOf(i.model),
      })),
    };
  });
  const usage_summary = Object.fromEntries([...byModel].sort((a, b) => b[1].credit - a[1].credit || a[0].localeCompare(b[0])).map(([model, s]) => [model, {
    model_stats: { Requests: s.requests, Prompt: s.prompt, Completion: s.completion, Reasoning: s.reasoning, Cached: s.cached, CreditUsed: credit(s.credit) },
    usage_analysis: { request_percentage: percent(s.requests, total.requests), cost_percentage: percent(s.credit, total.credit) },
    ...(s.units ? { units: s.units } : {}),
    ...batchOf(model),
  }]));
  return {
    object: 'bill_info',
    start_date: period.start,
    end_date: period.end,
    daily_costs,
    usage_summary,
    total_requests: total.requests,
    total_prompt: total.prompt,
    total_completion: total.completion,
    total_reasoning: total.reasoning,
    total_credit_used: credit(total.credit),
    token_summary: {
      input_total: total.prompt,
      cached_input: total.cached,
      uncached_input: Math.max(total.prompt - total.cached, 0),
      output_total: total.completion,
      reasoning_output: total.reasoning,
      processed_total: total.prompt + total.completion,
    },
  };
}

export interface AccountIdentity { id: number; name: string; alias: string; email: string; dna: string }

/**
 * usage_users of `/x-bill` from per (account, model) sums: accounts with requests only, most
 * credit first; shares are of the bill's totals (all descendants when no `user` filter).
 */
export function buildUsageUsers(rows: (UsageSums & { accountId: number; model: string })[], who: Map<number, AccountIdentity>): UsageUser[] {
  const perAccount = new Map<number, { sums: UsageSums; topCost: [string, number]; topRequests: [string, number] }>();
  const total = zero();
  for (const r of rows) {
    let a = perAccount.get(r.accountId);
    if (!a) perAccount.set(r.accountId, (a = { sums: zero(), topCost: ['', -1], topRequests: ['', -1] }));
    add(a.sums, r);
    add(total, r);
    if (r.credit > a.topCost[1] || (r.credit === a.topCost[1] && r.model < a.topCost[0])) a.topCost = [r.model, r.credit];
    if (r.requests > a.topRequests[1] || (r.requests === a.topRequests[1] && r.model < a.topRequests[0])) a.topRequests = [r.model, r.requests];
  }
  const users: UsageUser[] = [];
  for (const [id, a] of perAccount) {
    if (a.sums.requests <= 0) continue;
    const w = who.get(id);
    users.push({
      id,
      name: w?.name ?? '',
      alias: w?.alias ?? '',
      email: w?.email ?? '',
      dna: w?.dna ?? '',
      top_cost_model: a.topCost[0],
      top_request_model: a.topRequests[0],
      total_requests: a.sums.requests,
      total_prompt: a.sums.prompt,
      total_completion: a.sums.completion,
      total_reasoning: a.sums.reasoning,
      total_credit_used: credit(a.sums.credit),
      usage_analysis: { request_percentage: percent(a.sums.requests, total.requests), cost_percentage: percent(a.sums.credit, total.credit) },
    });
  }
  return users.sort((x, y) => y.total_credit_used - x.total_credit_used || y.total_requests - x.total_requests || x.id - y.id);
}
