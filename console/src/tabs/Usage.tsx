import { createMemo, createResource, createSignal, For, Show } from 'solid-js';
import type { BillInfo } from '../../../contract/billing/schemas';
import { api } from '../api';
import { Async } from '../ui/Async';
import { ShareBars } from '../ui/charts';
import { TimeChart } from '../ui/TimeChart';
import { RecentHealth } from './RecentHealth';
import { StatCard } from '../ui/StatCard';
import { formatCompact, formatCredit, formatInt } from '../ui/format';
import { billsFor, dailyTotals, modelTotals, type Scope } from './usage-data';

const DAYS = 30;
const SCOPES: { id: Scope; label: string }[] = [
  { id: 'all', label: 'Everything' },
  { id: 'own', label: 'My key' },
  { id: 'descendants', label: 'Subaccounts' },
];

/** Axis ticks of small amounts keep two significant digits, so $0.00012 and $0.00015 differ. */
const axisCredit = (n: number) => (n !== 0 && Math.abs(n) < 0.01 ? `$${Number(n.toPrecision(2))}` : formatCredit(n));
const dayX = (date: string) => Date.parse(`${date}T00:00:00Z`) / 1000;
const dayLabel = (sec: number) => new Date(sec * 1000).toISOString().slice(0, 10);

export function UsageTab() {
  const [scope, setScope] = createSignal<Scope>('all');
  const [bills, { refetch }] = createResource(async () => {
    const [own, descendants] = await Promise.all([api.billing.bill.query({ days: DAYS }), api.billing.descendants.query({ days: DAYS })]);
    return { own, descendants };
  });

  return (
    <div class="stack">
      <div class="page-head page-head-row">
        <div class="page-title">
          <h1>Usage</h1>
          <p class="muted">Requests and credit over the last {DAYS} days (UTC), for your own key and the accounts below it.</p>
        </div>
        <div class="segmented" role="tablist" aria-label="Whose usage">
          <For each={SCOPES}>
            {(s) => <button type="button" role="tab" aria-selected={scope() === s.id} classList={{ active: scope() === s.id }} onClick={() => setScope(s.id)}>{s.label}</button>}
          </For>
        </div>
      </div>
      <Async data={bills} label="Loading usage…" onRetry={refetch}>
        {(b) => {
          const selected = createMemo(() => billsFor(scope(), b.own, b.descendants));
          const days = createMemo(() => dailyTotals(selected()));
          const models = createMemo(() => modelTotals(selected(), 8));
          const sum = (f: (x: BillInfo) => number) => selected().reduce((n, x) => n + f(x), 0);
          return (
            <>
              <div class="stats">
                <StatCard label="Requests" value={formatInt(sum((x) => x.total_requests))} hint={`last ${DAYS} days`} testId="usage-requests" />
                <StatCard label="Credit used" value={formatCredit(sum((x) => x.total_credit_used))} hint={`last ${DAYS} days`} />
                <StatCard label="Tokens processed" value={formatCompact(sum((x) => x.token_summary.processed_total))} hint="input + output" />
              </div>
              <div class="grid-2 charts">
                <section class="card">
                  <div class="card-head"><h2>Requests per day</h2></div>
                  <TimeChart label="Requests per day" testId="chart-requests" step={86_400} x={days().map((d) => dayX(d.date))} formatX={dayLabel}
                    series={[{ label: 'Requests', values: days().map((d) => d.requests), color: '#2f5bea', style: 'bars', integer: true, format: (n) => formatCompact(n) }]} />
                </section>
                <section class="card">
                  <div class="card-head"><h2>Credit used per day</h2></div>
                  <TimeChart label="Credit used per day" testId="chart-credit" step={86_400} x={days().map((d) => dayX(d.date))} formatX={dayLabel}
                    series={[{ label: 'Credit', values: days().map((d) => d.credit), color: '#0f9d8a', style: 'bars', format: axisCredit }]} />
                </section>
              </div>
              <RecentHealth />
              <div class="grid-2">
                <section class="card">
                  <div class="card-head"><h2>Top models</h2><span class="muted small">by credit used</span></div>
                  <ShareBars empty="No requests in this period."
                    items={models().map((m) => ({ name: m.model, value: m.credit || m.requests, detail: `${formatCredit(m.credit)} · ${formatInt(m.requests)} req` }))} />
                </section>
                <section class="card">
                  <div class="card-head"><h2>Top subaccounts</h2><span class="muted small">by credit used</span></div>
                  <Show when={b.descendants.usage_users.length > 0} fallback={<p class="muted">No subaccount made requests in this period.</p>}>
                    <table class="table table-compact">
                      <thead><tr><th>Account</th><th class="num">Requests</th><th class="num">Credit</th><th class="num">Share</th></tr></thead>
                      <tbody>
                        <For each={b.descendants.usage_users.slice(0, 10)}>
                          {(u) => (
                            <tr>
                              <td class="break"><strong>{u.alias || u.name}</strong><div class="muted small">#{u.id} · {u.top_request_model}</div></td>
                              <td class="num">{formatInt(u.total_requests)}</td>
                              <td class="num">{formatCredit(u.total_credit_used)}</td>
                              <td class="num">{u.usage_analysis.cost_percentage.toFixed(1)}%</td>
                            </tr>
                          )}
                        </For>
                      </tbody>
                    </table>
                  </Show>
                </section>
              </div>
            </>
          );
        }}
      </Async>
    </div>
  );
}
