import { formatInt } from './format';
import { t } from '../i18n';

export function Pager(props: { page: number; pages: number; total: number; busy?: boolean; onPage: (page: number) => void }) {
  return (
    <nav class="pager" aria-label={t('pager.label')}>
      <button type="button" class="btn btn-small" disabled={props.busy || props.page <= 1} onClick={() => props.onPage(1)} aria-label={t('pager.first')}>«</button>
      <button type="button" class="btn btn-small" disabled={props.busy || props.page <= 1} onClick={() => props.onPage(props.page - 1)}>{t('pager.previous')}</button>
      <span class="pager-status" data-testid="pager-status">
        {t('pager.status', { page: formatInt(props.page), pages: formatInt(Math.max(props.pages, 1)), total: formatInt(props.total) })}
      </span>
      <button type="button" class="btn btn-small" disabled={props.busy || props.page >= props.pages} onClick={() => props.onPage(props.page + 1)}>{t('pager.next')}</button>
      <button type="button" class="btn btn-small" disabled={props.busy || props.page >= props.pages} onClick={() => props.onPage(props.pages)} aria-label={t('pager.last')}>»</button>
    </nav>
  );
}
