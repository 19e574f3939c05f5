import { createResource, For, Show } from 'solid-js';
import type { PeriodUsage, UserLive } from '../../../contract/dashboard/schemas';
import { api } from '../api';
import { Async } from '../ui/Async';
import { StatCard } from '../ui/StatCard';
import { CardTable } from '../ui/CardTable';
import { formatDay, formatInt, formatMoney, formatPercent } from '../ui/format';
import { t } from '../i18n';

type Cap = 'daily_limit' | 'soft_limit' | 'hard_limit';
type Rate = 'rpm' | 'rph' | 'rpd' | 'tpm' | 'tph' | 'tpd';
const RATES: Rate[] = ['rpm', 'rph', 'rpd', 'tpm', 'tph', 'tpd'];

/** The daily cap counts today's credit; the two monthly caps this month's (UTC, as the server counts). */
const capsOf = (live: UserLive): { cap: Cap; limit: number | null; used: number }[] => [
  { cap: 'daily_limit', limit: live.daily_limit, used: live.daily_usage.CreditUsed },
  { cap: 'soft_limit', limit: live.soft_limit, used: live.monthly_usage.CreditUsed },
  { cap: 'hard_limit', limit: live.hard_limit, used: live.monthly_usage.CreditUsed },
];

const dayOf = (iso: string) => formatDay(iso.slice(0, 10));
const orNoLimit = (n: number | null | undefined, format: (n: number) => string) => (n === null || n === undefined ? t('balance.noLimit') : format(n));

function ModelUsageTable(props: { title: string; usage: PeriodUsage; testId: string }) {
  const rows = () => Object.entries(props.usage.ModelUsage).sort(([, a], [, b]) => b.CreditUsed - a.CreditUsed || b.Requests - a.Requests);
  return (
    <section class="card" aria-label={props.title}>
      <div class="card-head"><h2>{props.title}</h2></div>
      <Show when={rows().length > 0} fallback={<p class="muted">{t('balance.noUsage')}</p>}>
        <CardTable testId={props.testId} rows={rows()} columns={[
          { label: t('balance.model'), class: 'break', cell: ([model]) => model },
          { label: t('balance.requestsColumn'), num: true, cell: ([, u]) => formatInt(u.Requests) },
          { label: t('balance.input'), num: true, cell: ([, u]) => formatInt(u.Prompt) },
          { label: t('balance.output'), num: true, cell: ([, u]) => formatInt(u.Completion) },
          { label: t('balance.credit'), num: true, cell: ([, u]) => formatMoney(u.CreditUsed) },
        ]} />
      </Show>
    </section>
  );
}

/** An account's own credit, caps, limits and usage: one `/dashboard/live` round trip. */
export function BalanceTab() {
  const [live, { refetch }] = createResource(() => api.dashboard.live.query());
  return (
    <div class="stack">
      <div class="page-head page-head-row">
        <div class="page-title">
          <h1>{t('balance.title')}</h1>
          <p class="muted">{t('balance.intro')}</p>
        </div>
        <button type="button" class="btn" onClick={() => refetch()}>{t('common.refresh')}</button>
      </div>
      <Async data={live} label={t('balance.loading')} onRetry={refetch}>
        {(l) => (
          <>
            <div class="stats">
              <StatCard label={t('balance.balance')} value={formatMoney(l.balance)} hint={t('balance.balanceHint')} testId="balance-balance" />
              <StatCard label={t('balance.usedToday')} value={formatMoney(l.daily_usage.CreditUsed)} hint={t('balance.requests', { n: formatInt(l.daily_usage.Requests) })} testId="balance-today" />
              <StatCard label={t('balance.usedMonth')} value={formatMoney(l.monthly_usage.CreditUsed)} hint={t('balance.requests', { n: formatInt(l.monthly_usage.Requests) })} testId="balance-month" />
            </div>
            <section class="card" aria-label={t('balance.cards')}>
              <div class="card-head"><h2>{t('balance.cards')}</h2></div>
              <Show when={l.credit_balance.length > 0} fallback={<p class="muted">{t('balance.noCards')}</p>}>
                <CardTable testId="balance-cards" rows={l.credit_balance} columns={[
                  { label: t('balance.amount'), num: true, cell: (card) => formatMoney(card.amount) },
                  { label: t('balance.left'), num: true, cell: (card) => formatMoney(card.balance) },
                  { label: t('balance.granted'), class: 'nowrap', cell: (card) => dayOf(card.granted_at) },
                  { label: t('balance.expires'), class: 'nowrap', cell: (card) => dayOf(card.expires_at) },
                ]} />
              </Show>
            </section>
            <div class="grid-2">
              <section class="card" aria-label={t('balance.caps')}>
                <div class="card-head"><h2>{t('balance.caps')}</h2></div>
                <CardTable testId="balance-caps" rows={capsOf(l)} rowAttrs={(c) => ({ 'data-cap': c.cap })} columns={[
                  { label: t('balance.cap'), cell: (c) => t(`balance.capNames.${c.cap}`) },
                  { label: t('balance.limit'), num: true, cell: (c) => orNoLimit(c.limit, formatMoney) },
                  { label: t('balance.used'), num: true, cell: (c) => formatMoney(c.used) },
                  { label: t('balance.share'), num: true, cell: (c) => (c.limit ? formatPercent((c.used / c.limit) * 100) : '–') },
                ]} />
              </section>
              <section class="card" aria-label={t('balance.rateLimits')}>
                <div class="card-head"><h2>{t('balance.rateLimits')}</h2></div>
                <table class="table table-compact" data-testid="balance-rates">
                  <tbody>
                    <For each={RATES}>
                      {(r) => (
                        <tr data-rate={r}>
                          <th scope="row">{t(`balance.rateNames.${r}`)}</th>
                          <td class="num">{orNoLimit(l[r], formatInt)}</td>
                        </tr>
                      )}
                    </For>
                  </tbody>
                </table>
              </section>
            </div>
            <section class="card" aria-label={t('balance.modelLimits')}>
              <div class="card-head"><h2>{t('balance.modelLimits')}</h2></div>
              <Show when={Object.keys(l.model_limits).length > 0} fallback={<p class="muted">{t('balance.noModelLimits')}</p>}>
                <CardTable testId="balance-model-limits" rows={Object.entries(l.model_limits)} columns={[
                  { label: t('balance.model'), class: 'break', cell: ([model]) => model },
                  { label: t('balance.rateNames.rpm'), num: true, cell: ([, limit]) => orNoLimit(limit.rpm, formatInt) },
                  { label: t('balance.rateNames.tpm'), num: true, cell: ([, limit]) => orNoLimit(limit.tpm, formatInt) },
                ]} />
              </Show>
            </section>
            <ModelUsageTable title={t('balance.today')} usage={l.daily_usage} testId="balance-usage-today" />
            <ModelUsageTable title={t('balance.month')} usage={l.monthly_usage} testId="balance-usage-month" />
          </>
        )}
      </Async>
    </div>
  );
}
