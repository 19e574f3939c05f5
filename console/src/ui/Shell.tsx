import { createEffect, createResource, createSignal, ErrorBoundary, For, onCleanup, Show, type Component } from 'solid-js';
import { Dynamic } from 'solid-js/web';
import { api } from '../api';
import { ErrorBox, latest } from './Async';
import { endSession } from '../session';
import { ExamplesTab } from '../tabs/Examples';
import { ProvidersTab } from '../tabs/Providers';
import { ConfigTab } from '../tabs/Config';
import { NewsTab } from '../tabs/News';
import { LogsTab } from '../tabs/Logs';
import { UsageTab } from '../tabs/Usage';
import { AccountsTab } from '../tabs/Accounts';
import { RequestsTab } from '../tabs/Requests';
import { RotateSelf } from './RotateSelf';

interface Tab { id: string; label: string; component: Component }

const TABS: Tab[] = [
  { id: 'examples', label: 'AI API examples', component: ExamplesTab },
  { id: 'accounts', label: 'Accounts', component: AccountsTab },
  { id: 'providers', label: 'Providers', component: ProvidersTab },
  { id: 'config', label: 'System configuration', component: ConfigTab },
  { id: 'news', label: 'Broadcast news', component: NewsTab },
  { id: 'logs', label: 'Operation log', component: LogsTab },
  { id: 'usage', label: 'Usage', component: UsageTab },
  { id: 'requests', label: 'Requests', component: RequestsTab },
];

const fromHash = () => {
  const id = location.hash.replace(/^#\/?/, '');
  return TABS.find((t) => t.id === id) ?? TABS[0];
};

/** The signed-in console: header, tab bar, and the current tab (remounted on every visit). */
export function Shell() {
  const [tab, setTab] = createSignal<Tab>(fromHash());
  const onHash = () => setTab(fromHash());
  window.addEventListener('hashchange', onHash);
  onCleanup(() => window.removeEventListener('hashchange', onHash));
  const [me] = createResource(() => api.dashboard.info.query());
  const [rotating, setRotating] = createSignal(false);
  // On a phone the tab bar scrolls sideways; keep the current tab in view.
  let nav!: HTMLElement;
  createEffect(() => nav.querySelector<HTMLElement>(`[href="#/${tab().id}"]`)?.scrollIntoView({ block: 'nearest', inline: 'center' }));

  return (
    <div class="shell">
      <header class="topbar">
        <div class="brand"><span class="brand-mark" aria-hidden="true" />Switchyard <span class="brand-sub">Owner console</span></div>
        <div class="topbar-right">
          <Show when={latest(me)}>
            {(m) => <span class="whoami" title={`DNA ${m().dna}`}>{m().name} <span class="badge">{m().role === 'root' ? 'Root' : 'Owner'}</span></span>}
          </Show>
          <button type="button" class="btn btn-small" aria-expanded={rotating()} onClick={() => setRotating(true)}>Rotate my key</button>
          <button type="button" class="btn btn-small" onClick={() => endSession('You signed out.')}>Sign out</button>
        </div>
      </header>
      <nav class="tabs" aria-label="Console sections" ref={nav}>
        <For each={TABS}>
          {(t) => (
            <a href={`#/${t.id}`} class="tab" classList={{ 'tab-active': tab().id === t.id }} aria-current={tab().id === t.id ? 'page' : undefined}>
              {t.label}
            </a>
          )}
        </For>
      </nav>
      <main class="content">
        <Show when={rotating()}>
          <RotateSelf onClose={() => setRotating(false)} />
        </Show>
        {/* A tab that fails to render shows the error instead of blanking the console. */}
        <ErrorBoundary fallback={(err, reset) => <ErrorBox error={err} onRetry={reset} />}>
          <Dynamic component={tab().component} />
        </ErrorBoundary>
      </main>
    </div>
  );
}
