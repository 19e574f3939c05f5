import { createMemo, createResource, createSignal, For } from 'solid-js';
import { api } from '../api';
import { Async } from '../ui/Async';
import { StatCard } from '../ui/StatCard';
import { TimeChart } from '../ui/TimeChart';
import { formatCompact, formatCredit, formatInt } from '../ui/format';
import { useAccountChoices } from './Requests';
import { hourBuckets } from './recent-data';

/** The most requests one page of `/dashboard/requests` holds: the sample the rates are read from. */
const SAMPLE = 200;

const median = (xs: number[]) => {
  if (!xs.length) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const percent = (n: number) => `${n.toFixed(n > 0 && n < 10 ? 1 : 0)} %`;
const hourLabel = (sec: number) => `${new Date(sec * 1000).toISOString().slice(0, 13).replace('T', ' ')}:00 UTC`;

/**
 * Failure rate and size of an account's latest requests, from the usage records: a record is
 * `abnormal` when its stream was cut or stalled. Calls that delivered nothing are not billed
 * and have no record, and the records hold no duration, so latency is not shown here (the
 * gateway's metrics measure it).
 */
export function RecentHealth() {
  const choices = useAccountChoices();
  const [user, setUser] = createSignal('');
  const [recent, { refetch }] = createResource(user, async (u) => (await api.dashboard.requests.query({ limit: SAMPLE, ...(u ? { user: u } : {}) })).data);
  return (
    <section class="card" data-testid="recent-health">
      <div class="card-head">
        <div class="card-title"><h2>Failure rate and request size</h2>
          <p class="muted small">The latest {SAMPLE} recorded requests of one account, per UTC hour. Latency is not in the usage records; the gateway's metrics have it.</p></div>
        <select class="narrow-select" aria-label="Account" value={user()} onChange={(e) => setUser(e.currentTarget.value)}>
          <For each={choices()}>{(c) => <option value={c.value}>{c.label}</option>}</For>
        </select>
      </div>
      <Async data={recent} label="Loading recent requests…" onRetry={refetch}>
        {(rows) => {
          const buckets = createMemo(() => hourBuckets(rows));
          const failed = () => rows.filter((r) => r.status !== 'ok').length;
          return (
            <>
              <div class="stats">
                <StatCard label="Failure rate" value={rows.length ? percent((failed() / rows.length) * 100) : '–'} hint={`${formatInt(failed())} of ${formatInt(rows.length)} cut or stalled`} testId="failure-rate" />
                <StatCard label="Tokens per request" value={formatCompact(median(rows.map((r) => r.prompt + r.completion)))} hint="median, in + out" />
                <StatCard label="Credit per request" value={formatCredit(median(rows.map((r) => r.credit_used)))} hint="median" />
              </div>
              <TimeChart label="Requests and failure rate per hour" testId="chart-failures" step={3600} x={buckets().map((b) => b.hour)} formatX={hourLabel}
                series={[
                  { label: 'Requests', values: buckets().map((b) => b.requests), color: '#2f5bea', style: 'bars', integer: true, format: (n) => formatCompact(n) },
                  { label: 'Failure rate', values: buckets().map((b) => (b.requests ? (b.abnormal / b.requests) * 100 : null)), color: '#c4312b', style: 'line', format: percent, right: true },
                ]} />
            </>
          );
        }}
      </Async>
    </section>
  );
}
