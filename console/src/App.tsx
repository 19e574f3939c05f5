import { Show } from 'solid-js';
import { sessionKey } from './session';
import { SignIn } from './ui/SignIn';
import { Shell } from './ui/Shell';

export function App() {
  return (
    <Show when={sessionKey()} fallback={<SignIn />}>
      <Shell />
    </Show>
  );
}
