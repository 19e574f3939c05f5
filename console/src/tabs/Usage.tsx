import { createMemo, createResource, createSignal, For, Show } from 'solid-js';
import type { BillInfo } from '../../../contract/billing/schemas';
import { api } from '../api';
import { Async } from '../ui/Async';
import { ShareBars } from '../ui/charts';
import { TimeChart } from '../ui/TimeChart';
import { RecentHealth } from './RecentHealth';
import { StatCard } from '../ui/StatCard';
import { formatChartTime, formatCompact, formatInt, formatMoney, formatPercent } from '../ui/format';
import { t } from '../i18n';
import { batchTotals, billsFor, dailyTotals, modelTotals, type Scope } from './usage-data';

const DAYS = 30;
const SCOPES: Scope[] = ['all', 'own', 'descendants'];

/** Axis ticks of small amounts keep two significant digits, so $0.00012 and $0.00015 differ. */
const axisCredit = (n: number) => formatMoney(n, { axis: true });
const dayX = (date: string) => Date.parse(`${date}T00:00:00Z`) / 1000;
const dayLabel = (sec: number) => formatChartTime(sec, 'day');

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
          <h1>{t('usage.title')}</h1>
          <p class="muted">{t('usage.intro', { days: formatInt(DAYS) })}</p>
        </div>
        <div class="segmented" role="tablist" aria-label={t('usage.whose')}>
          <For each={SCOPES}>
            {(s) => <button type="button" role="tab" aria-selected={scope() === s} classList={{ active: scope() === s }} onClick={() => setScope(s)}>{t(`usage.scopes.${s}`)}</button>}
          </For>
        </div>
      </div>
      <Async data={bills} label={t('usage.loading')} onRetry={refetch}>
        {(b) => {
          const selected = createMemo(() => billsFor(scope(), b.own, b.descendants));
          const days = createMemo(() => dailyTotals(selected()));
          const models = createMemo(() => modelTotals(selected(), 8));
          const batches = createMemo(() => batchTotals(selected()));
          // Provider batches' share, apart: they run at the batch price and each line counts as a request.
          const ofBatches = (amount: string) => (batches().requests > 0 ? t('usage.inBatches', { amount }) : '');
          const hint = (...parts: string[]) => parts.filter(Boolean).join(t('usage.hintSeparator'));
          const lastDays = () => t('usage.lastDays', { days: formatInt(DAYS) });
          const sum = (f: (x: BillInfo) => number) => selected().reduce((n, x) => n + f(x), 0);
          return (
            <>
              <div class="stats">
                <StatCard label={t('usage.requests')} value={formatInt(sum((x) => x.total_requests))} hint={hint(lastDays(), ofBatches(formatInt(batches().requests)))} testId="usage-requests" />
                <StatCard label={t('usage.creditUsed')} value={formatMoney(sum((x) => x.total_credit_used))} hint={hint(lastDays(), ofBatches(formatMoney(batches().credit)))} testId="usage-credit" />
                <StatCard label={t('usage.tokens')} value={formatCompact(sum((x) => x.token_summary.processed_total))} hint={t('usage.tokensHint')} />
              </div>
              <div class="grid-2 charts">
                <section class="card">
                  <div class="card-head"><h2>{t('usage.requestsPerDay')}</h2></div>
                  <TimeChart label={t('usage.requestsPerDay')} testId="chart-requests" step={86_400} x={days().map((d) => dayX(d.date))} formatX={dayLabel}
                    series={[{ label: t('usage.requests'), values: days().map((d) => d.requests), color: '#2f5bea', style: 'bars', integer: true, format: (n) => formatCompact(n) }]} />
                </section>
                <section class="card">
                  <div class="card-head"><h2>{t('usage.creditPerDay')}</h2></div>
                  <TimeChart label={t('usage.creditPerDay')} testId="chart-credit" step={86_400} x={days().map((d) => dayX(d.date))} formatX={dayLabel}
                    series={[{ label: t('usage.credit'), values: days().map((d) => d.credit), color: '#0f9d8a', style: 'bars', format: axisCredit }]} />
                </section>
              </div>
              <RecentHealth />
              <div class="grid-2">
                <section class="card">
                  <div class="card-head"><h2>{t('usage.topModels')}</h2><span class="muted small">{t('usage.byCredit')}</span></div>
                  <ShareBars empty={t('usage.noRequests')}
                    items={models().map((m) => ({ name: m.model, value: m.credit || m.requests, detail: t('usage.modelDetail', { credit: formatMoney(m.credit), requests: formatInt(m.requests) }) }))} />
                </section>
                <section class="card">
                  <div class="card-head"><h2>{t('usage.topSubaccounts')}</h2><span class="muted small">{t('usage.byCredit')}</span></div>
                  <Show when={b.descendants.usage_users.length > 0} fallback={<p class="muted">{t('usage.noSubaccountRequests')}</p>}>
                    <table class="table table-compact">
                      <thead><tr><th>{t('usage.account')}</th><th class="num">{t('usage.requests')}</th><th class="num">{t('usage.credit')}</th><th class="num">{t('usage.share')}</th></tr></thead>
                      <tbody>
                        <For each={b.descendants.usage_users.slice(0, 10)}>
                          {(u) => (
                            <tr>
                              <td class="break"><strong>{u.alias || u.name}</strong><div class="muted small">{t('usage.accountDetail', { id: String(u.id), model: u.top_request_model })}</div></td>
                              <td class="num">{formatInt(u.total_requests)}</td>
                              <td class="num">{formatMoney(u.total_credit_used)}</td>
                              <td class="num">{formatPercent(u.usage_analysis.cost_percentage)}</td>
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
