import { createResource, createSignal, For, Show } from 'solid-js';
import type { RequestPage, RequestQuery } from '../../../contract/dashboard/schemas';
import { api, describeError } from '../api';
import { Async, latest } from '../ui/Async';
import { Field } from '../ui/Field';
import { formatCredit, formatInt, formatTime, formatUnits } from '../ui/format';

type RequestUsage = RequestPage['data'][number];

const PAGE = 50;

/** `datetime-local` text (the browser's time zone) as RFC 3339, or undefined when empty. */
const isoOf = (local: string) => (local ? new Date(local).toISOString() : undefined);

export interface RequestFilters { user: string; model: string; status: '' | 'ok' | 'abnormal'; since: string; until: string; tree?: boolean }

export function queryOf(f: RequestFilters, before?: string): RequestQuery {
  return {
    limit: PAGE,
    ...(f.user ? { user: f.user } : {}),
    ...(f.tree ? { scope: 'tree' as const } : {}),
    ...(f.model.trim() ? { model: f.model.trim() } : {}),
    ...(f.status ? { status: f.status } : {}),
    ...(isoOf(f.since) ? { since: isoOf(f.since) } : {}),
    ...(isoOf(f.until) ? { until: isoOf(f.until) } : {}),
    ...(before ? { before } : {}),
  };
}

/** Accounts to pick from: you, then everyone below you in tree order. */
export function useAccountChoices() {
  const [me] = createResource(() => api.dashboard.info.query());
  const [below] = createResource(() => api.accounts.descendants.query({ order: 'dna', size: 1000 }));
  return () => [
    ...(latest(me) ? [{ value: '', label: `${latest(me)!.name} (you)` }] : []),
    ...(latest(below) ?? []).map((a) => ({ value: String(a.ID), label: `${'\u00a0\u00a0'.repeat(Math.max(0, a.DNA.split('.').filter(Boolean).length - (latest(me)?.dna.split('.').filter(Boolean).length ?? 1)))}${a.Alias || a.Name} (#${a.ID})` })),
  ];
}

export function RequestsTab() {
  const choices = useAccountChoices();
  // The tab opens on the whole tree below the caller (an Owner sees every request of its tenant).
  const [draft, setDraft] = createSignal<RequestFilters>({ user: '', model: '', status: '', since: '', until: '', tree: true });
  const [filters, setFilters] = createSignal<RequestFilters>(draft());
  const [more, setMore] = createSignal<RequestUsage[]>([]);
  const [next, setNext] = createSignal<string | null>(null);
  const [moreError, setMoreError] = createSignal<string | null>(null);
  const [loadingMore, setLoadingMore] = createSignal(false);
  const [page, { refetch }] = createResource(filters, async (f) => {
    const r = await api.dashboard.requests.query(queryOf(f));
    setMore([]);
    setNext(r.next);
    return r;
  });
  const set = <K extends keyof RequestFilters>(k: K, v: RequestFilters[K]) => setDraft({ ...draft(), [k]: v });
  const apply = (e: SubmitEvent) => {
    e.preventDefault();
    setFilters({ ...draft() });
  };
  const loadMore = async () => {
    const cursor = next();
    if (!cursor) return;
    setLoadingMore(true);
    setMoreError(null);
    try {
      const r = await api.dashboard.requests.query(queryOf(filters(), cursor));
      setMore([...more(), ...r.data]);
      setNext(r.next);
    } catch (err) {
      setMoreError(describeError(err).message);
    } finally {
      setLoadingMore(false);
    }
  };

  return (
    <div class="stack">
      <div class="page-head">
        <h1>Requests</h1>
        <p class="muted">Recent proxied requests of an account and, by default, every account below it, newest first, as they were recorded and billed (usage is written within about a second).</p>
      </div>
      <form class="card filters" onSubmit={apply} aria-label="Request filters">
        <Field label="Account" for="rq-user">
          <select id="rq-user" value={draft().user} onChange={(e) => set('user', e.currentTarget.value)}>
            <For each={choices()}>{(c) => <option value={c.value}>{c.label}</option>}</For>
          </select>
        </Field>
        <Field label="Below too" for="rq-tree">
          <input id="rq-tree" type="checkbox" checked={draft().tree ?? false} onChange={(e) => set('tree', e.currentTarget.checked)} />
        </Field>
        <Field label="Model" for="rq-model">
          <input id="rq-model" placeholder="any" value={draft().model} onInput={(e) => set('model', e.currentTarget.value)} />
        </Field>
        <Field label="Status" for="rq-status">
          <select id="rq-status" value={draft().status} onChange={(e) => set('status', e.currentTarget.value as RequestFilters['status'])}>
            <option value="">any</option><option value="ok">ok</option><option value="abnormal">abnormal (cut or stalled)</option>
          </select>
        </Field>
        <Field label="From" for="rq-since">
          <input id="rq-since" type="datetime-local" value={draft().since} onInput={(e) => set('since', e.currentTarget.value)} />
        </Field>
        <Field label="Until" for="rq-until">
          <input id="rq-until" type="datetime-local" value={draft().until} onInput={(e) => set('until', e.currentTarget.value)} />
        </Field>
        <div class="filters-actions">
          <button type="submit" class="btn btn-primary">Show</button>
          <button type="button" class="btn" onClick={() => refetch()}>Refresh</button>
        </div>
      </form>
      <section class="card">
        <Async data={page} label="Loading requests…" onRetry={refetch}>
          {(p) => (
            <Show when={p.data.length > 0} fallback={<p class="muted">No requests match.</p>}>
              <table class="table table-compact table-cards" data-testid="requests-table">
                <thead><tr><th>Time</th><th class="num">Account</th><th>Request ID</th><th>Model</th><th>Endpoint</th><th class="num">Level</th><th class="num wrap">Tokens in / out</th><th>Units</th><th class="num">Credit</th><th class="num wrap">Duration / first byte</th><th>Status</th></tr></thead>
                <tbody>
                  <For each={[...p.data, ...more()]}>
                    {(r) => (
                      <tr data-request-id={r.request_id ?? ''}>
                        <td data-label="Time" class="nowrap">{formatTime(r.created_at)}</td>
                        <td data-label="Account" class="num">#{r.account_id}</td>
                        <td data-label="Request ID"><code class="small">{r.request_id ?? '–'}</code></td>
                        <td data-label="Model" class="break">{r.model}</td>
                        <td data-label="Endpoint">{r.endpoint}</td>
                        <td data-label="Level" class="num">{r.level ?? '–'}</td>
                        <td data-label="Tokens" class="num">{formatInt(r.prompt)} / {formatInt(r.completion)}</td>
                        <td data-label="Units">{formatUnits(r.units)}</td>
                        <td data-label="Credit" class="num">{formatCredit(r.credit_used)}</td>
                        <td data-label="Duration / first byte" class="num nowrap">{r.duration_ms === null ? '–' : `${formatInt(r.duration_ms)} ms`} / {r.first_byte_ms === null ? '–' : `${formatInt(r.first_byte_ms)} ms`}</td>
                        <td data-label="Status"><span class="badge" classList={{ 'badge-on': r.status === 'ok', 'badge-warn': r.status !== 'ok' }}>{r.status}</span></td>
                      </tr>
                    )}
                  </For>
                </tbody>
              </table>
              <div class="pager">
                <span class="pager-status muted small">{p.data.length + more().length} shown</span>
                <Show when={next()}>
                  <button type="button" class="btn btn-small" disabled={loadingMore()} onClick={loadMore}>{loadingMore() ? 'Loading…' : 'Load older'}</button>
                </Show>
              </div>
              <Show when={moreError()}><div class="notice notice-error" role="alert">{moreError()}</div></Show>
            </Show>
          )}
        </Async>
      </section>
    </div>
  );
}
