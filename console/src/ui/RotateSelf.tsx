import { createSignal, Show } from 'solid-js';
import { api, describeError } from '../api';
import { startSession } from '../session';
import { KeyShownOnce } from './KeyShownOnce';
import { Notice, type NoticeState } from './Notice';

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
        <section class="card" aria-label="Rotate my key">
          <div class="card-head"><h2>Rotate my key</h2></div>
          <p>
            A new API key replaces the one this console signed in with. The old key stops working at once,
            everywhere: scripts and other consoles using it get 401 until they get the new one.
          </p>
          <Notice notice={notice()} onClose={() => setNotice(null)} />
          <div class="form-actions">
            <button type="button" class="btn" disabled={busy()} onClick={() => props.onClose()}>Keep my key</button>
            <button type="button" class="btn btn-danger" disabled={busy()} onClick={rotate}>{busy() ? 'Rotating…' : 'Rotate now'}</button>
          </div>
        </section>
      }>
        {(key) => (
          <>
            <KeyShownOnce title="Your new API key" apiKey={key()}>
              Store it now: it is never shown again. This console already uses it; sign in with it next time.
            </KeyShownOnce>
            <div class="form-actions"><button type="button" class="btn" onClick={() => props.onClose()}>Done</button></div>
          </>
        )}
      </Show>
    </div>
  );
}
