import { createResource, For, Show } from 'solid-js';
import type { PeriodUsage, UserLive } from '../../../contract/dashboard/schemas';
import { api } from '../api';
import { Async } from '../ui/Async';
import { StatCard } from '../ui/StatCard';
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
        <table class="table table-compact table-cards" data-testid={props.testId}>
          <thead><tr>
            <th>{t('balance.model')}</th><th class="num">{t('balance.requestsColumn')}</th><th class="num">{t('balance.input')}</th>
            <th class="num">{t('balance.output')}</th><th class="num">{t('balance.credit')}</th>
          </tr></thead>
          <tbody>
            <For each={rows()}>
              {([model, u]) => (
                <tr>
                  <td data-label={t('balance.model')} class="break">{model}</td>
                  <td data-label={t('balance.requestsColumn')} class="num">{formatInt(u.Requests)}</td>
                  <td data-label={t('balance.input')} class="num">{formatInt(u.Prompt)}</td>
                  <td data-label={t('balance.output')} class="num">{formatInt(u.Completion)}</td>
                  <td data-label={t('balance.credit')} class="num">{formatMoney(u.CreditUsed)}</td>
                </tr>
              )}
            </For>
          </tbody>
        </table>
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
                <table class="table table-compact table-cards" data-testid="balance-cards">
                  <thead><tr>
                    <th class="num">{t('balance.amount')}</th><th class="num">{t('balance.left')}</th><th>{t('balance.granted')}</th><th>{t('balance.expires')}</th>
                  </tr></thead>
                  <tbody>
                    <For each={l.credit_balance}>
                      {(card) => (
                        <tr>
                          <td data-label={t('balance.amount')} class="num">{formatMoney(card.amount)}</td>
                          <td data-label={t('balance.left')} class="num">{formatMoney(card.balance)}</td>
                          <td data-label={t('balance.granted')} class="nowrap">{dayOf(card.granted_at)}</td>
                          <td data-label={t('balance.expires')} class="nowrap">{dayOf(card.expires_at)}</td>
                        </tr>
                      )}
                    </For>
                  </tbody>
                </table>
              </Show>
            </section>
            <div class="grid-2">
              <section class="card" aria-label={t('balance.caps')}>
                <div class="card-head"><h2>{t('balance.caps')}</h2></div>
                <table class="table table-compact table-cards" data-testid="balance-caps">
                  <thead><tr><th>{t('balance.cap')}</th><th class="num">{t('balance.limit')}</th><th class="num">{t('balance.used')}</th><th class="num">{t('balance.share')}</th></tr></thead>
                  <tbody>
                    <For each={capsOf(l)}>
                      {(c) => (
                        <tr data-cap={c.cap}>
                          <td data-label={t('balance.cap')}>{t(`balance.capNames.${c.cap}`)}</td>
                          <td data-label={t('balance.limit')} class="num">{orNoLimit(c.limit, formatMoney)}</td>
                          <td data-label={t('balance.used')} class="num">{formatMoney(c.used)}</td>
                          <td data-label={t('balance.share')} class="num">{c.limit ? formatPercent((c.used / c.limit) * 100) : '–'}</td>
                        </tr>
                      )}
                    </For>
                  </tbody>
                </table>
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
                <table class="table table-compact table-cards" data-testid="balance-model-limits">
                  <thead><tr><th>{t('balance.model')}</th><th class="num">{t('balance.rateNames.rpm')}</th><th class="num">{t('balance.rateNames.tpm')}</th></tr></thead>
                  <tbody>
                    <For each={Object.entries(l.model_limits)}>
                      {([model, limit]) => (
                        <tr>
                          <td data-label={t('balance.model')} class="break">{model}</td>
                          <td data-label={t('balance.rateNames.rpm')} class="num">{orNoLimit(limit.rpm, formatInt)}</td>
                          <td data-label={t('balance.rateNames.tpm')} class="num">{orNoLimit(limit.tpm, formatInt)}</td>
                        </tr>
                      )}
                    </For>
                  </tbody>
                </table>
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
