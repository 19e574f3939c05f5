import { createSignal, Show } from 'solid-js';
import { apiCodeOf, createApi, describeError, isUnauthorized } from '../api';
import { t } from '../i18n';
import { sessionEndReason, startSession } from '../session';
import { LanguageSwitch } from './LanguageSwitch';

/** Keys the server does not know: told in the console's language; any other refusal keeps the API's own reason. */
const UNKNOWN_KEY = ['invalid_api_key', 'missing_api_key'];

/** Checks a key before the session starts: any enabled account may sign in; Shell picks its console. */
async function checkKey(key: string): Promise<string | null> {
  const probe = createApi(() => key);
  try {
    await probe.accounts.status.query();
    return null;
  } catch (err) {
    if (isUnauthorized(err) && UNKNOWN_KEY.includes(apiCodeOf(err) ?? '')) return t('signIn.invalidKey');
    return describeError(err).message;
  }
}

export function SignIn() {
  const [key, setKey] = createSignal('');
  const [error, setError] = createSignal<string | null>(null);
  const [busy, setBusy] = createSignal(false);

  const submit = async (e: SubmitEvent) => {
    e.preventDefault();
    const candidate = key().trim();
    if (!candidate) return setError(t('signIn.empty'));
    setBusy(true);
    setError(null);
    const problem = await checkKey(candidate);
    setBusy(false);
    if (problem) return setError(problem);
    setKey('');
    startSession(candidate);
  };

  return (
    <main class="signin">
      <form class="signin-card" onSubmit={submit} novalidate>
        <div class="signin-top">
          <div class="brand brand-large"><span class="brand-mark" aria-hidden="true" />Switchyard</div>
          <LanguageSwitch />
        </div>
        <h1>{t('signIn.heading')}</h1>
        <p class="muted">{t('signIn.intro')}</p>
        <Show when={sessionEndReason() && !error()}>
          <div class="notice notice-info" role="status">{t(`session.${sessionEndReason()!}`)}</div>
        </Show>
        <label for="api-key">{t('signIn.keyLabel')}</label>
        <input
          id="api-key"
          type="password"
          autocomplete="off"
          spellcheck={false}
          placeholder="sk-Xvs…"
          value={key()}
          onInput={(e) => setKey(e.currentTarget.value)}
          aria-invalid={!!error()}
          aria-describedby={error() ? 'signin-error' : undefined}
        />
        <Show when={error()}>
          <div class="notice notice-error" id="signin-error" role="alert">{error()}</div>
        </Show>
        <button type="submit" class="btn btn-primary btn-block" disabled={busy()}>{busy() ? t('signIn.checking') : t('signIn.submit')}</button>
      </form>
    </main>
  );
}
