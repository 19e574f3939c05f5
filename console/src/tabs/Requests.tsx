import { createMemo, createResource, createSignal, For, Show } from 'solid-js';
import type { RequestPage, RequestQuery } from '../../../contract/dashboard/schemas';
import { api, apiCodeOf, describeError } from '../api';
import { Async, latest } from '../ui/Async';
import { Field } from '../ui/Field';
import { formatInt, formatMoney, formatTime, formatUnits } from '../ui/format';
import { t, tn } from '../i18n';
import { keyKindLabel } from '../ui/key-kind';

type RequestUsage = RequestPage['data'][number];

const PAGE = 50;

const ms = (n: number | null) => (n === null ? '–' : t('common.ms', { n: formatInt(n) }));

/** What a provider batch's record stands for: its lines that were billed. */
export const batchLabel = (lines: number) => tn('requests.batch', lines, { n: formatInt(lines) });

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

/**
 * You and everyone below you, as loaded once for a tab: `choices` to pick an account from (you,
 * then the subtree in tree order), `nameOf` an account's shown name (Alias, else Name), or null
 * for an account not (yet) loaded.
 */
export function useAccounts() {
  const [me] = createResource(() => api.dashboard.info.query());
  // An account without manage permission may not list its subtree (`manage_denied`): it picks itself alone.
  const [below] = createResource(() => api.accounts.descendants.query({ order: 'dna', size: 1000 }).catch((err: unknown) => {
    if (apiCodeOf(err) === 'manage_denied') return [];
    throw err;
  }));
  const depth = (dna: string) => dna.split('.').filter(Boolean).length;
  const choices = () => [
    ...(latest(me) ? [{ value: '', label: t('requests.you', { name: latest(me)!.name }) }] : []),
    ...(latest(below) ?? []).map((a) => ({
      value: String(a.ID),
      label: '\u00a0\u00a0'.repeat(Math.max(0, depth(a.DNA) - (latest(me) ? depth(latest(me)!.dna) : 1))) + t('requests.choice', { name: a.Alias || a.Name, id: String(a.ID) }),
    })),
  ];
  const names = createMemo(() => {
    const m = new Map<number, string>((latest(below) ?? []).map((a) => [a.ID, a.Alias || a.Name]));
    const self = latest(me);
    if (self) m.set(self.id, self.alias || self.name);
    return m;
  });
  return { choices, nameOf: (id: number) => names().get(id) ?? null };
}

/** Accounts to pick from: you, then everyone below you in tree order. */
export const useAccountChoices = () => useAccounts().choices;

/** An account by its name, `#ID` on hover; by `#ID` alone while its name is unknown. */
function AccountName(props: { id: number; name: string | null }) {
  const ref = () => t('common.idRef', { id: String(props.id) });
  return <Show when={props.name} fallback={ref()}>{(name) => <span title={ref()}>{name()}</span>}</Show>;
}

export function RequestsTab() {
  const { choices, nameOf } = useAccounts();
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
        <h1>{t('requests.title')}</h1>
        <p class="muted">{t('requests.intro')}</p>
      </div>
      <form class="card filters" onSubmit={apply} aria-label={t('requests.filters')}>
        <Field label={t('requests.account')} for="rq-user">
          <select id="rq-user" value={draft().user} onChange={(e) => set('user', e.currentTarget.value)}>
            <For each={choices()}>{(c) => <option value={c.value}>{c.label}</option>}</For>
          </select>
        </Field>
        <Field label={t('requests.belowToo')} for="rq-tree">
          <input id="rq-tree" type="checkbox" checked={draft().tree ?? false} onChange={(e) => set('tree', e.currentTarget.checked)} />
        </Field>
        <Field label={t('requests.model')} for="rq-model">
          <input id="rq-model" placeholder={t('requests.any')} value={draft().model} onInput={(e) => set('model', e.currentTarget.value)} />
        </Field>
        <Field label={t('requests.status')} for="rq-status">
          <select id="rq-status" value={draft().status} onChange={(e) => set('status', e.currentTarget.value as RequestFilters['status'])}>
            <option value="">{t('requests.any')}</option><option value="ok">{t('requests.ok')}</option><option value="abnormal">{t('requests.abnormal')}</option>
          </select>
        </Field>
        <Field label={t('requests.from')} for="rq-since">
          <input id="rq-since" type="datetime-local" value={draft().since} onInput={(e) => set('since', e.currentTarget.value)} />
        </Field>
        <Field label={t('requests.until')} for="rq-until">
          <input id="rq-until" type="datetime-local" value={draft().until} onInput={(e) => set('until', e.currentTarget.value)} />
        </Field>
        <div class="filters-actions">
          <button type="submit" class="btn btn-primary">{t('requests.show')}</button>
          <button type="button" class="btn" onClick={() => refetch()}>{t('common.refresh')}</button>
        </div>
      </form>
      <section class="card">
        <Async data={page} label={t('requests.loading')} onRetry={refetch}>
          {(p) => (
            <Show when={p.data.length > 0} fallback={<p class="muted">{t('requests.noMatch')}</p>}>
              <table class="table table-compact table-cards" data-testid="requests-table">
                <thead><tr>
                  <th>{t('requests.time')}</th><th>{t('requests.account')}</th><th>{t('requests.requestId')}</th><th>{t('requests.model')}</th><th>{t('requests.endpoint')}</th>
                  <th class="num wrap">{t('requests.levelKind')}</th><th class="num wrap">{t('requests.tokensInOut')}</th><th>{t('requests.units')}</th><th class="num">{t('requests.credit')}</th>
                  <th class="num wrap">{t('requests.duration')}</th><th>{t('requests.status')}</th>
                </tr></thead>
                <tbody>
                  <For each={[...p.data, ...more()]}>
                    {(r) => (
                      <tr data-request-id={r.request_id ?? ''}>
                        <td data-label={t('requests.time')} class="nowrap">{formatTime(r.created_at)}</td>
                        <td data-label={t('requests.account')} class="break"><AccountName id={r.account_id} name={nameOf(r.account_id)} /></td>
                        <td data-label={t('requests.requestId')}><code class="small">{r.batch_id ?? r.request_id ?? '–'}</code></td>
                        <td data-label={t('requests.model')} class="break">{r.model}</td>
                        <td data-label={t('requests.endpoint')}>
                          {r.endpoint}
                          {/* A provider batch's one record: the lines it billed, at the batch price. */}
                          <Show when={r.batch_id}><div><span class="badge badge-batch" data-testid="batch-badge" title={t('requests.batchTitle', { id: r.batch_id ?? '' })}>{batchLabel(r.batch_lines ?? 0)}</span></div></Show>
                        </td>
                        <td data-label={t('requests.levelKind')} class="num">{r.level ?? '–'}<Show when={r.key_kind}>{(k) => <div class="muted small" data-testid="key-kind">{keyKindLabel(k())}</div>}</Show></td>
                        <td data-label={t('requests.tokens')} class="num">{formatInt(r.prompt)} / {formatInt(r.completion)}</td>
                        <td data-label={t('requests.units')}>{formatUnits(r.units)}</td>
                        <td data-label={t('requests.credit')} class="num">{formatMoney(r.credit_used)}</td>
                        <td data-label={t('requests.duration')} class="num nowrap">{ms(r.duration_ms)} / {ms(r.first_byte_ms)}</td>
                        <td data-label={t('requests.status')}><span class="badge" classList={{ 'badge-on': r.status === 'ok', 'badge-warn': r.status !== 'ok' }}>{t(`requests.statuses.${r.status}`)}</span></td>
                      </tr>
                    )}
                  </For>
                </tbody>
              </table>
              <div class="pager">
                <span class="pager-status muted small">{t('requests.shown', { n: formatInt(p.data.length + more().length) })}</span>
                <Show when={next()}>
                  <button type="button" class="btn btn-small" disabled={loadingMore()} onClick={loadMore}>{loadingMore() ? t('common.loading') : t('requests.loadOlder')}</button>
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
