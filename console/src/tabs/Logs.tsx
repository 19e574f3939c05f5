import { createResource, createSignal, For, Show } from 'solid-js';
import { api } from '../api';
import { Async, latest } from '../ui/Async';
import { Pager } from '../ui/Pager';
import { formatTime } from '../ui/format';
import { t } from '../i18n';
import { useSignedIn } from '../ui/signed-in';

/** The console's page size: a fixed choice of the console (the API allows up to 100). */
const PAGE_SIZE = 24;

const readableValue = (v: unknown): string => {
  if (v === null || v === undefined || v === '') return '—';
  if (Array.isArray(v)) return v.length ? v.map(readableValue).join(', ') : '—';
  // A nested record (a credit transfer, say) as its fields in words, not as JSON.
  return typeof v === 'object' ? Object.entries(v as Record<string, unknown>).map(([k, x]) => `${k} ${readableValue(x)}`).join(', ') : String(v);
};

/** Details are stored as text or a JSON object; show objects as `key: value` pairs. */
function readableDetails(details: string): string {
  if (!details.startsWith('{')) return details || '—';
  try {
    const pairs = Object.entries(JSON.parse(details) as Record<string, unknown>).map(([k, v]) => `${k}: ${readableValue(v)}`);
    return pairs.length ? pairs.join(' · ') : '—';
  } catch {
    return details;
  }
}

export function LogsTab() {
  const signedIn = useSignedIn();
  const [page, setPage] = createSignal(1);
  // Mounting the tab fetches again, so every visit shows the latest entries.
  const [logs, { refetch }] = createResource(page, (p) => api.dashboard.logs.query({ page: p, size: PAGE_SIZE }));
  const pages = () => Math.max(1, Math.ceil((latest(logs)?.total ?? 0) / PAGE_SIZE));

  return (
    <div class="stack">
      <div class="page-head page-head-row">
        <div class="page-title">
          <h1>{t('logs.title')}</h1>
          <p class="muted">{signedIn?.info.is_owner === false ? t('logs.introAccount') : t('logs.intro')}</p>
        </div>
        <button type="button" class="btn" onClick={() => refetch()} disabled={logs.loading}>{t('common.refresh')}</button>
      </div>
      <Async data={logs} label={t('logs.loading')} onRetry={refetch}>
        {(data) => (
          <section class="card" aria-busy={logs.loading}>
            <Show when={data.logs.length > 0} fallback={<p class="empty">{t('logs.empty')}</p>}>
              <table class="table table-cards" data-testid="log-table">
                <thead><tr><th>{t('logs.time')}</th><th>{t('logs.action')}</th><th>{t('logs.target')}</th><th>{t('logs.details')}</th><th>{t('logs.ip')}</th></tr></thead>
                <tbody>
                  <For each={data.logs}>
                    {(e) => (
                      <tr>
                        <td data-label={t('logs.time')} class="nowrap">{formatTime(e.created_at)}</td>
                        <td data-label={t('logs.action')}>
                          <code>{e.action}</code>
                          <Show when={e.status !== 'success'}> <span class="badge badge-off">{e.status}</span></Show>
                        </td>
                        <td data-label={t('logs.target')}>{e.target_id === null ? '—' : t('common.idRef', { id: String(e.target_id) })}</td>
                        <td data-label={t('logs.details')} class="break details">{readableDetails(e.details)}</td>
                        <td data-label={t('logs.ip')} class="nowrap"><code>{e.ip}</code></td>
                      </tr>
                    )}
                  </For>
                </tbody>
              </table>
            </Show>
            <Pager page={data.page} pages={pages()} total={data.total} busy={logs.loading} onPage={setPage} />
          </section>
        )}
      </Async>
    </div>
  );
}
