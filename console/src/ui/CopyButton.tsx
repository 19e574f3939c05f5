import { createSignal, onCleanup } from 'solid-js';
import { t } from '../i18n';

/** The async Clipboard API needs a secure context; a plain-HTTP LAN address falls back to execCommand. */
async function copyText(text: string): Promise<void> {
  if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.style.position = 'fixed';
  area.style.opacity = '0';
  document.body.appendChild(area);
  area.select();
  const ok = document.execCommand('copy');
  area.remove();
  if (!ok) throw new Error('copy refused');
}

export function CopyButton(props: { text: () => string; label?: string }) {
  const [state, setState] = createSignal<'idle' | 'copied' | 'failed'>('idle');
  let timer: ReturnType<typeof setTimeout> | undefined;
  onCleanup(() => clearTimeout(timer));
  const copy = async () => {
    try {
      await copyText(props.text());
      setState('copied');
    } catch {
      setState('failed');
    }
    clearTimeout(timer);
    timer = setTimeout(() => setState('idle'), 2000);
  };
  return (
    <button type="button" class="btn btn-small copy-btn" onClick={copy} aria-live="polite">
      {state() === 'copied' ? t('common.copied') : state() === 'failed' ? t('common.copyFailed') : (props.label ?? t('common.copy'))}
    </button>
  );
}
