import { createMemo, createResource, createSignal, For } from 'solid-js';
import { api } from '../api';
import { Async } from '../ui/Async';
import { StatCard } from '../ui/StatCard';
import { TimeChart } from '../ui/TimeChart';
import { formatChartTime, formatCompact, formatInt, formatMoney, formatPercent } from '../ui/format';
import { t } from '../i18n';
import { useAccountChoices } from './Requests';
import { hourBuckets, perRequest, requestsOf } from './recent-data';

/** The most requests one page of `/dashboard/requests` holds: the sample the rates are read from. */
const SAMPLE = 200;

const median = (xs: number[]) => {
  if (!xs.length) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const hourLabel = (sec: number) => formatChartTime(sec, 'hour');

/**
 * Failure rate and size of an account's latest requests, from the usage records: a record is
 * `abnormal` when its stream was cut or stalled. Calls that delivered nothing are not billed
 * and have no record. Latency has a chart of its own.
 */
export function RecentHealth() {
  const choices = useAccountChoices();
  const [user, setUser] = createSignal('');
  const [recent, { refetch }] = createResource(user, async (u) => (await api.dashboard.requests.query({ limit: SAMPLE, ...(u ? { user: u } : {}) })).data);
  return (
    <section class="card" data-testid="recent-health">
      <div class="card-head">
        <div class="card-title"><h2>{t('recentHealth.title')}</h2>
          <p class="muted small">{t('recentHealth.note', { n: formatInt(SAMPLE) })}</p></div>
        <select class="narrow-select" aria-label={t('recentHealth.account')} value={user()} onChange={(e) => setUser(e.currentTarget.value)}>
          <For each={choices()}>{(c) => <option value={c.value}>{c.label}</option>}</For>
        </select>
      </div>
      <Async data={recent} label={t('recentHealth.loading')} onRetry={refetch}>
        {(rows) => {
          const buckets = createMemo(() => hourBuckets(rows));
          const failed = () => rows.filter((r) => r.status !== 'ok').length;
          // A provider batch's record stands for its lines (never cut: a batch is not streamed).
          const requests = () => rows.reduce((n, r) => n + requestsOf(r), 0);
          return (
            <>
              <div class="stats">
                <StatCard label={t('recentHealth.failureRate')} value={requests() ? formatPercent((failed() / requests()) * 100) : '–'}
                  hint={t('recentHealth.failed', { failed: formatInt(failed()), total: formatInt(requests()) })} testId="failure-rate" />
                <StatCard label={t('recentHealth.tokensPerRequest')} value={formatCompact(median(rows.map((r) => perRequest(r).tokens)))} hint={t('recentHealth.tokensHint')} />
                <StatCard label={t('recentHealth.creditPerRequest')} value={formatMoney(median(rows.map((r) => perRequest(r).credit)))} hint={t('recentHealth.median')} />
              </div>
              <TimeChart label={t('recentHealth.chart')} testId="chart-failures" step={3600} x={buckets().map((b) => b.hour)} formatX={hourLabel}
                series={[
                  { label: t('recentHealth.requests'), values: buckets().map((b) => b.requests), color: '#2f5bea', style: 'bars', integer: true, format: (n) => formatCompact(n) },
                  { label: t('recentHealth.failureRate'), values: buckets().map((b) => (b.requests ? (b.abnormal / b.requests) * 100 : null)), color: '#c4312b', style: 'line', format: formatPercent, right: true },
                ]} />
            </>
          );
        }}
      </Async>
    </section>
  );
}
