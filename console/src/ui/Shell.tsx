import { createEffect, createResource, createSignal, ErrorBoundary, For, Match, onCleanup, Show, Switch, type Component } from 'solid-js';
import { Dynamic } from 'solid-js/web';
import { api } from '../api';
import type { UserInfo } from '../../../contract/dashboard/schemas';
import type { UserStatus } from '../../../contract/accounts/schemas';
import { SignedInContext } from './signed-in';
import { ErrorBox, latest, Loading } from './Async';
import { endSession } from '../session';
import { ExamplesTab } from '../tabs/Examples';
import { ProvidersTab } from '../tabs/Providers';
import { ConfigTab } from '../tabs/Config';
import { NewsTab } from '../tabs/News';
import { LogsTab } from '../tabs/Logs';
import { UsageTab } from '../tabs/Usage';
import { AccountsTab } from '../tabs/Accounts';
import { RequestsTab } from '../tabs/Requests';
import { BalanceTab } from '../tabs/Balance';
import { ModelsTab } from '../tabs/Models';
import { RotateSelf } from './RotateSelf';
import { t } from '../i18n';
import type { en } from '../i18n/en';
import { LanguageSwitch } from './LanguageSwitch';

type TabId = keyof typeof en.shell.tabs;
/** `when`: shown only to an account whose status allows it (e.g. manage permission). */
interface Tab { id: TabId; component: Component; when?: (status: UserStatus) => boolean }

const OWNER_TABS: Tab[] = [
  { id: 'examples', component: ExamplesTab },
  { id: 'accounts', component: AccountsTab },
  { id: 'providers', component: ProvidersTab },
  { id: 'config', component: ConfigTab },
  { id: 'news', component: NewsTab },
  { id: 'logs', component: LogsTab },
  { id: 'usage', component: UsageTab },
  { id: 'requests', component: RequestsTab },
  // An Owner is an account too: its own money and what it may call.
  { id: 'balance', component: BalanceTab },
  { id: 'models', component: ModelsTab },
];

/** Any other account's own pages: its money and limits, what it may call, its subtree's requests and accounts, news and log. */
const ACCOUNT_TABS: Tab[] = [
  { id: 'balance', component: BalanceTab },
  { id: 'usage', component: UsageTab },
  { id: 'models', component: ModelsTab },
  { id: 'requests', component: RequestsTab },
  // A reseller's business: its subaccounts (with manage permission), the news it sees, its log.
  { id: 'accounts', component: AccountsTab, when: (s) => s.manage },
  { id: 'news', component: NewsTab },
  { id: 'logs', component: LogsTab },
];

const fromHash = (tabs: Tab[]) => {
  const id = location.hash.replace(/^#\/?/, '');
  return tabs.find((item) => item.id === id) ?? tabs[0];
};

/** The signed-in console, picked by whose key it is: an Owner's (Root included), or an account's own. */
export function SignedIn() {
  // One batched round trip: who it is, and whether it may manage subaccounts.
  const [me, { refetch }] = createResource(async () => {
    const [info, status] = await Promise.all([api.dashboard.info.query(), api.accounts.status.query()]);
    return { info, status };
  });
  return (
    <Switch fallback={<Loading label={t('common.loading')} />}>
      <Match when={me.error}>
        <main class="content">
          <ErrorBox error={me.error} onRetry={refetch} />
          <div><button type="button" class="btn btn-small" onClick={() => endSession('signedOut')}>{t('shell.signOut')}</button></div>
        </main>
      </Match>
      <Match when={latest(me)}>{(signed) => <SignedInContext.Provider value={signed()}><Shell me={signed().info} status={signed().status} /></SignedInContext.Provider>}</Match>
    </Switch>
  );
}

/** Header, tab bar, and the current tab (remounted on every visit). */
function Shell(props: { me: UserInfo; status: UserStatus }) {
  const owner = props.me.is_owner;
  const tabs = (owner ? OWNER_TABS : ACCOUNT_TABS).filter((item) => !item.when || item.when(props.status));
  const [tab, setTab] = createSignal<Tab>(fromHash(tabs));
  const onHash = () => setTab(fromHash(tabs));
  window.addEventListener('hashchange', onHash);
  onCleanup(() => window.removeEventListener('hashchange', onHash));
  const [rotating, setRotating] = createSignal(false);
  // On a phone the tab bar scrolls sideways; keep the current tab in view.
  let nav!: HTMLElement;
  createEffect(() => nav.querySelector<HTMLElement>(`[href="#/${tab().id}"]`)?.scrollIntoView({ block: 'nearest', inline: 'center' }));

  return (
    <div class="shell">
      <header class="topbar">
        <div class="brand"><span class="brand-mark" aria-hidden="true" />Switchyard <span class="brand-sub">{owner ? t('app.brandSub') : t('app.accountSub')}</span></div>
        <div class="topbar-right">
          <span class="whoami" title={t('shell.dna', { dna: props.me.dna })}>{props.me.name} <span class="badge">{t(`common.${props.me.role}`)}</span></span>
          <LanguageSwitch />
          <button type="button" class="btn btn-small" aria-expanded={rotating()} onClick={() => setRotating(true)}>{t('shell.rotate')}</button>
          <button type="button" class="btn btn-small" onClick={() => endSession('signedOut')}>{t('shell.signOut')}</button>
        </div>
      </header>
      <nav class="tabs" aria-label={t('shell.sections')} ref={nav}>
        <For each={tabs}>
          {(item) => (
            <a href={`#/${item.id}`} class="tab" classList={{ 'tab-active': tab().id === item.id }} aria-current={tab().id === item.id ? 'page' : undefined}>
              {t(`shell.tabs.${item.id}`)}
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
