import { Show, type JSX } from 'solid-js';
import { t } from '../i18n';

export type NoticeKind = 'success' | 'error' | 'info';
export interface NoticeState { kind: NoticeKind; text: JSX.Element }

/** A dismissible banner; errors are announced as alerts, the rest politely. */
export function Notice(props: { notice: NoticeState | null; onClose?: () => void }) {
  return (
    <Show when={props.notice}>
      {(n) => (
        <div class={`notice notice-${n().kind}`} role={n().kind === 'error' ? 'alert' : 'status'}>
          <span>{n().text}</span>
          {props.onClose && <button type="button" class="notice-close" aria-label={t('common.dismiss')} onClick={() => props.onClose!()}>×</button>}
        </div>
      )}
    </Show>
  );
}
