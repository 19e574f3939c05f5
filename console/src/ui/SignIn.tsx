import { createSignal, Show } from 'solid-js';
import { createApi, describeError, isUnauthorized } from '../api';
import { sessionEndReason, startSession } from '../session';

const NOT_OWNER = 'This key belongs to an account that is not an Owner. The console accepts only Owner keys; subaccounts use the API directly.';

/** Checks a key before the session starts: `/dashboard/status` tells whether its account is an Owner. */
async function checkOwnerKey(key: string): Promise<string | null> {
  const probe = createApi(() => key);
  try {
    const status = await probe.accounts.status.query();
    return status.admin ? null : NOT_OWNER;
  } catch (err) {
    if (isUnauthorized(err)) return 'This API key is not valid (or its account is disabled).';
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
    if (!candidate) return setError('Enter the API key of an Owner account.');
    setBusy(true);
    setError(null);
    const problem = await checkOwnerKey(candidate);
    setBusy(false);
    if (problem) return setError(problem);
    setKey('');
    startSession(candidate);
  };

  return (
    <main class="signin">
      <form class="signin-card" onSubmit={submit} novalidate>
        <div class="brand brand-large"><span class="brand-mark" aria-hidden="true" />Switchyard</div>
        <h1>Owner console</h1>
        <p class="muted">Sign in with the API key of an Owner account. The key stays in this browser tab and is forgotten when the tab is closed.</p>
        <Show when={sessionEndReason() && !error()}>
          <div class="notice notice-info" role="status">{sessionEndReason()}</div>
        </Show>
        <label for="api-key">API key</label>
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
        <button type="submit" class="btn btn-primary btn-block" disabled={busy()}>{busy() ? 'Checking…' : 'Sign in'}</button>
      </form>
    </main>
  );
}
