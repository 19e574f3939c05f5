import { createResource, Show } from 'solid-js';
import type { LatencyReport } from '../../../contract/dashboard/latency-schemas';
import { api } from '../api';
import { Async } from '../ui/Async';
import { TimeChart } from '../ui/TimeChart';
import { ShareBars } from '../ui/charts';
import { CardTable, type Column } from '../ui/CardTable';
import { formatChartTime, formatInt, formatMs } from '../ui/format';
import { t } from '../i18n';
import { keyKindLabel } from '../ui/key-kind';

/** The Usage tab's period as /dashboard/latency takes it (the bill's date parameters). */
export interface LatencyPeriod { date?: string; start?: string; end?: string; days?: number }

type Group = LatencyReport['by_model'][number] | LatencyReport['by_key_kind'][number];
interface Row { name: string; group: Group }

const ms = (n: number | null) => (n === null ? '–' : formatMs(n));
const dayLabel = (sec: number) => formatChartTime(sec, 'day');

/** The period's parameters that are set, and the scope: one string, so a new object with the same content does not read again. */
const queryKey = (p: LatencyPeriod, scope: 'own' | 'subtree') =>
  JSON.stringify({ ...(p.date ? { date: p.date } : {}), ...(p.start ? { start: p.start } : {}), ...(p.end ? { end: p.end } : {}), ...(p.days ? { days: p.days } : {}), scope });

/**
 * Duration and first byte of the calls of a period (the caller's own, or with manage permission
 * its subtree's): p50/p90 per day as a chart, p50/p90/p99 per model and per provider key kind.
 * The figures are the server's histogram estimates (/dashboard/latency), said so under the title.
 */
export function LatencyPanel(props: { period: LatencyPeriod; scope: 'own' | 'subtree' }) {
  const [report, { refetch }] = createResource(() => queryKey(props.period, props.scope), (key) => api.dashboard.latency.query(JSON.parse(key)));
  return (
    <section class="card" data-testid="latency-panel" aria-labelledby="latency-title">
      <div class="card-head">
        <div class="card-title">
          <h2 id="latency-title">{t('latency.title')}</h2>
          <p class="muted small">{props.scope === 'subtree' ? t('latency.introSubtree') : t('latency.intro')}</p>
        </div>
      </div>
      <p class="muted small">{t('latency.estimate')}</p>
      <Async data={report} label={t('latency.loading')} onRetry={refetch}>
        {(r) => (
          <Show when={r.requests > 0} fallback={<p class="muted" data-testid="latency-empty">{t('latency.empty')}</p>}>
            <div class="stack">
              <TimeChart label={t('latency.chart')} testId="latency-chart" step={86_400} x={r.daily.map((d) => d.timestamp)} formatX={dayLabel}
                series={[
                  { label: t('latency.durationP50'), values: r.daily.map((d) => d.duration_ms.p50), color: '#2f5bea', style: 'line', format: formatMs },
                  { label: t('latency.durationP90'), values: r.daily.map((d) => d.duration_ms.p90), color: '#8aa4f5', style: 'line', format: formatMs },
                  { label: t('latency.firstByteP50'), values: r.daily.map((d) => d.first_byte_ms.p50), color: '#0f8a5f', style: 'line', format: formatMs },
                  { label: t('latency.firstByteP90'), values: r.daily.map((d) => d.first_byte_ms.p90), color: '#7cc9a9', style: 'line', format: formatMs },
                ]} />
              <div class="grid-2" data-testid="latency-bars">
                <LatencyBars title={t('latency.barsByModel')} rows={r.by_model.map((g) => ({ name: g.model, group: g }))} />
                <LatencyBars title={t('latency.barsByKeyKind')} rows={r.by_key_kind.map((g) => ({ name: keyKindLabel(g.key_kind), group: g }))} />
              </div>
              <LatencyTable title={t('latency.byModel')} head={t('latency.model')} testId="latency-models" rows={r.by_model.map((g) => ({ name: g.model, group: g }))} />
              <LatencyTable title={t('latency.byKeyKind')} head={t('latency.keyKind')} testId="latency-key-kinds" rows={r.by_key_kind.map((g) => ({ name: keyKindLabel(g.key_kind), group: g }))} />
            </div>
          </Show>
        )}
      </Async>
    </section>
  );
}

/** Each row's p90 duration as a bar beside the others, with its p50 and p99 in words. */
function LatencyBars(props: { title: string; rows: Row[] }) {
  const items = () => props.rows.map((r) => ({
    name: r.name,
    value: r.group.duration_ms.p90 ?? 0,
    detail: t('latency.barDetail', { p50: ms(r.group.duration_ms.p50), p90: ms(r.group.duration_ms.p90), p99: ms(r.group.duration_ms.p99) }),
  }));
  return (
    <div>
      <h3 class="small bars-head">{props.title}</h3>
      <ShareBars items={items()} empty={t('latency.empty')} />
    </div>
  );
}

/** One list of the report: calls, streamed calls, and the three percentiles of each time. */
function LatencyTable(props: { title: string; head: string; testId: string; rows: Row[] }) {
  // No value (no streamed call for a first byte): a dash, read out as a word.
  const time = (v: number | null) => (v === null ? <><span aria-hidden="true">–</span><span class="sr-only">{t('latency.noValue')}</span></> : ms(v));
  const percentile = (label: string, value: (g: Group) => number | null): Column<Row> => ({ label, num: true, wrapHead: true, cell: (r) => time(value(r.group)) });
  return (
    <div>
      <h3 class="small">{props.title}</h3>
      <CardTable testId={props.testId} rows={props.rows} columns={[
        { label: props.head, class: 'break', cell: (r) => r.name },
        { label: t('latency.calls'), num: true, cell: (r) => formatInt(r.group.requests) },
        { label: t('latency.streamed'), num: true, cell: (r) => formatInt(r.group.first_byte_requests) },
        percentile(t('latency.durationP50'), (g) => g.duration_ms.p50),
        percentile(t('latency.durationP90'), (g) => g.duration_ms.p90),
        percentile(t('latency.durationP99'), (g) => g.duration_ms.p99),
        percentile(t('latency.firstByteP50'), (g) => g.first_byte_ms.p50),
        percentile(t('latency.firstByteP90'), (g) => g.first_byte_ms.p90),
        percentile(t('latency.firstByteP99'), (g) => g.first_byte_ms.p99),
      ]} />
    </div>
  );
}
