import { createSignal, Show } from 'solid-js';
import { api, describeError } from '../api';
import { startSession } from '../session';
import { KeyShownOnce } from './KeyShownOnce';
import { Notice, type NoticeState } from './Notice';
import { t } from '../i18n';

/** What `/x-self` wants as `confirm`: today's UTC date, so only a deliberate call today rotates. */
const confirmationForToday = () => `${new Date().toISOString().slice(0, 10)}-ROTATE-SELF`;

/**
 * Replaces the signed-in account's own key. The old key stops working at once, so the console
 * switches its session to the new key in the same step; the new key is shown once to be stored.
 */
export function RotateSelf(props: { onClose: () => void }) {
  const [busy, setBusy] = createSignal(false);
  const [issued, setIssued] = createSignal<string | null>(null);
  const [notice, setNotice] = createSignal<NoticeState | null>(null);

  const rotate = async () => {
    setBusy(true);
    setNotice(null);
    try {
      const r = await api.accounts.rotateSelf.mutate({ confirm: confirmationForToday() });
      startSession(r.rotate.key);
      setIssued(r.rotate.key);
    } catch (err) {
      setNotice({ kind: 'error', text: describeError(err).message });
    } finally {
      setBusy(false);
    }
  };

  return (
    <div class="stack rotate-self" data-testid="rotate-self">
      <Show when={issued()} fallback={
        <section class="card" aria-label={t('rotate.title')}>
          <div class="card-head"><h2>{t('rotate.title')}</h2></div>
          <p>{t('rotate.explain')}</p>
          <Notice notice={notice()} onClose={() => setNotice(null)} />
          <div class="form-actions">
            <button type="button" class="btn" disabled={busy()} onClick={() => props.onClose()}>{t('rotate.keep')}</button>
            <button type="button" class="btn btn-danger" disabled={busy()} onClick={rotate}>{busy() ? t('rotate.rotating') : t('rotate.now')}</button>
          </div>
        </section>
      }>
        {(key) => (
          <>
            <KeyShownOnce title={t('rotate.newKey')} apiKey={key()}>{t('rotate.store')}</KeyShownOnce>
            <div class="form-actions"><button type="button" class="btn" onClick={() => props.onClose()}>{t('common.done')}</button></div>
          </>
        )}
      </Show>
    </div>
  );
}
