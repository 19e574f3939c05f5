import { createEffect, Show } from 'solid-js';
import { t } from './i18n';
import { sessionKey } from './session';
import { SignIn } from './ui/SignIn';
import { SignedIn } from './ui/Shell';

export function App() {
  createEffect(() => { document.title = t('app.title'); });
  return (
    <Show when={sessionKey()} fallback={<SignIn />}>
      <SignedIn />
    </Show>
  );
}
