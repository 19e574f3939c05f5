import type { JSX } from 'solid-js';
import { CopyButton } from './CopyButton';
import { t } from '../i18n';

/** A freshly issued API key: the only time the console (or the server) can show it. */
export function KeyShownOnce(props: { title: string; apiKey: string; children: JSX.Element }) {
  return (
    <section class="card new-key" data-testid="new-key" role="status">
      <div class="card-head"><h2>{props.title}</h2><span class="badge badge-warn">{t('keyShown.badge')}</span></div>
      <p class="muted small">{props.children}</p>
      <div class="inline-field key-line">
        <code class="mono break" data-testid="new-key-value">{props.apiKey}</code>
        <CopyButton text={() => props.apiKey} label={t('keyShown.copy')} />
      </div>
    </section>
  );
}
