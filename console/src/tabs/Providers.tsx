import { createMemo, createResource, createSignal, For, Show } from 'solid-js';
import type { ProviderKey, ProviderKeyResult } from '../../../contract/keys/schemas';
import type { ConfView } from '../../../contract/config/schemas';
import { api, describeError } from '../api';
import { Async, latest } from '../ui/Async';
import { Notice, type NoticeState } from '../ui/Notice';
import { StatCard } from '../ui/StatCard';
import { formatInt, formatTime } from '../ui/format';
import { ProviderForm } from './ProviderForm';
import { t, tn } from '../i18n';

const PAGE = 1000;

/** Every key of the Owner, page by page (the API caps a page at 1000). */
async function loadKeys(): Promise<ProviderKey[]> {
  const all: ProviderKey[] = [];
  for (let page = 1; ; page++) {
    const batch = await api.keys.list.query({ page, size: PAGE });
    all.push(...batch);
    if (batch.length < PAGE) return all;
  }
}


type HealthEntry = ConfView['KeyHealth'][number];

/** The gateway's health entries per key (whole key and per model), from `/x-conf`. */
async function loadHealth(): Promise<Map<number, HealthEntry[]>> {
  const byKey = new Map<number, HealthEntry[]>();
  for (const h of (await api.config.view.query()).KeyHealth) byKey.set(h.ID, [...(byKey.get(h.ID) ?? []), h]);
  return byKey;
}

const STATE_CLASS = { healthy: 'badge-on', failing: 'badge-warn', open: 'badge-off', 'half-open': 'badge-warn' } as const;

/**
 * The key's health as the gateway sees it: the whole key's circuit (connection errors,
 * timeouts), then any model failing on it alone; each with its last error and since when.
 */
function HealthCell(props: { entries: HealthEntry[] | undefined }) {
  const list = () => [...(props.entries ?? [])].sort((a, b) => (a.Model ?? '').localeCompare(b.Model ?? ''));
  return (
    <Show when={list().length > 0} fallback={<span class="badge badge-on" data-testid="health-state">{t('providers.states.healthy')}</span>}>
      <div class="health-list">
        <For each={list()}>
          {(h) => (
            <div class="health-entry" data-testid={`health-${h.Model ?? 'key'}`}>
              <span class={`badge ${STATE_CLASS[h.State]}`} data-testid="health-state" title={h.Until ? t('providers.backAt', { at: formatTime(h.Until) }) : undefined}>
                {h.Model ? t('providers.modelState', { model: h.Model, state: t(`providers.states.${h.State}`) }) : t(`providers.states.${h.State}`)}
              </span>
              <span class="muted small" data-testid="health-since">{t('providers.since', { at: formatTime(h.Since) })}</span>
              <Show when={h.LastError}>
                <div class="small break" data-testid="health-error">{t('providers.lastError', { error: h.LastError ?? '' })}</div>
              </Show>
            </div>
          )}
        </For>
      </div>
    </Show>
  );
}

const hostOf = (url: string) => {
  try { return new URL(url).host; } catch { return url; }
};

function StatusBadge(props: { k: ProviderKey }) {
  return (
    <Show when={props.k.Status} fallback={
      <span class="badge badge-off" title={props.k.DisabledReason ?? t('providers.disabledByOwner')}>{props.k.DisabledReason ? t('providers.disabledByGateway') : t('providers.disabled')}</span>
    }>
      <Show when={props.k.Sleeping} fallback={<span class="badge badge-on">{t('providers.enabled')}</span>}>
        <span class="badge badge-warn" title={props.k.SleepUntil ? t('providers.sleepingUntil', { at: formatTime(props.k.SleepUntil) }) : t('providers.sleeping')}>{t('providers.sleeping')}</span>
      </Show>
    </Show>
  );
}

function KeyRow(props: { k: ProviderKey; health: HealthEntry[] | undefined; busy: boolean; onToggle: () => void; onEdit: () => void; onDelete: () => void }) {
  const [confirming, setConfirming] = createSignal(false);
  return (
    <tr data-testid={`key-row-${props.k.ID}`}>
      <td data-label={t('providers.name')} class="break"><strong>{props.k.Name || t('providers.keyName', { id: String(props.k.ID) })}</strong> <span class="muted small">{t('common.idRef', { id: String(props.k.ID) })}</span></td>
      <td data-label={t('providers.provider')} class="break">{hostOf(props.k.Provider)}</td>
      <td data-label={t('providers.kind')}>{t(`providers.kinds.${props.k.config.provider_type}`)}</td>
      <td data-label={t('providers.secret')}><code>…{props.k.SecretHint}</code></td>
      <td data-label={t('providers.status')}><StatusBadge k={props.k} /></td>
      <td data-label={t('providers.health')} class="col-health"><Show when={props.k.Status} fallback={<span class="muted small">–</span>}><HealthCell entries={props.health} /></Show></td>
      <td data-label={t('providers.actions')} class="actions"><div class="row-actions">
        <Show when={!confirming()} fallback={
          <>
            <span class="small">{t('providers.confirmDelete')}</span>
            <button type="button" class="btn btn-small btn-danger" disabled={props.busy} onClick={() => props.onDelete()}>{t('common.delete')}</button>
            <button type="button" class="btn btn-small" onClick={() => setConfirming(false)}>{t('providers.keep')}</button>
          </>
        }>
          <button type="button" class="btn btn-small" disabled={props.busy} onClick={() => props.onToggle()}>{props.k.Status ? t('providers.disable') : t('providers.enable')}</button>
          <button type="button" class="btn btn-small" disabled={props.busy} onClick={() => props.onEdit()}>{t('providers.edit')}</button>
          <button type="button" class="btn btn-small btn-ghost-danger" disabled={props.busy} onClick={() => setConfirming(true)}>{t('common.delete')}</button>
        </Show>
      </div></td>
    </tr>
  );
}

export function ProvidersTab() {
  const [keys, { refetch: refetchKeys, mutate }] = createResource(loadKeys);
  const [health, { refetch: refetchHealth }] = createResource(loadHealth);
  const refetch = () => {
    void refetchHealth();
    return refetchKeys();
  };
  // A fresh object per opening, so the form remounts when another key is picked while it is open.
  const [formFor, setFormFor] = createSignal<{ editing: ProviderKey | null } | null>(null);
  const [notice, setNotice] = createSignal<NoticeState | null>(null);
  const [busyId, setBusyId] = createSignal<number | null>(null);

  const levels = createMemo(() => {
    const groups = new Map<number, ProviderKey[]>();
    for (const k of latest(keys) ?? []) groups.set(k.Level, [...(groups.get(k.Level) ?? []), k]);
    return [...groups.entries()].sort((a, b) => a[0] - b[0]).map(([level, list]) => ({ level, keys: list.sort((a, b) => a.ID - b.ID) }));
  });
  const active = () => (latest(keys) ?? []).filter((k) => k.Status).length;
  const sleeping = () => (latest(keys) ?? []).filter((k) => k.Status && k.Sleeping).length;
  const outOfRotation = () => (latest(keys) ?? []).filter((k) => k.Status && latest(health)?.get(k.ID)?.some((h) => h.Model === null && (h.State === 'open' || h.State === 'half-open'))).length;
  const activeHint = () => [
    sleeping() ? t('providers.sleepingCount', { n: formatInt(sleeping()) }) : '',
    outOfRotation() ? t('providers.outCount', { n: formatInt(outOfRotation()) }) : '',
  ].filter(Boolean).join(t('providers.hintSeparator')) || t('providers.enabledKeys');

  const replace = (k: ProviderKey) => mutate((list) => (list ?? []).map((x) => (x.ID === k.ID ? k : x)));

  const done = (r: ProviderKeyResult) => {
    setFormFor(null);
    const name = r.Key.Name || t('common.idRef', { id: String(r.Key.ID) });
    if (r.Action === 'add') {
      setNotice({
        kind: 'success',
        text: (
          <>
            {t('providers.added', { name, level: String(r.Key.Level) })}
            <Show when={r.LevelMapper}>
              {' '}{t('providers.mapperAdded')} <code data-testid="level-mapper-entry">{r.LevelMapper}</code>
            </Show>
          </>
        ),
      });
    } else setNotice({ kind: 'success', text: t('providers.savedKey', { name }) });
    void refetch();
  };

  const act = async (k: ProviderKey, what: 'toggle' | 'delete') => {
    setBusyId(k.ID);
    setNotice(null);
    try {
      if (what === 'toggle') {
        const r = await api.keys.update.mutate({ id: String(k.ID), Status: !k.Status });
        replace(r.Key);
        setNotice({ kind: 'success', text: t(r.Key.Status ? 'providers.enabledKey' : 'providers.disabledKey', { name: r.Key.Name || t('common.idRef', { id: String(r.Key.ID) }) }) });
      } else {
        await api.keys.remove.mutate({ id: String(k.ID) });
        mutate((list) => (list ?? []).filter((x) => x.ID !== k.ID));
        setNotice({ kind: 'success', text: t('providers.deletedKey', { name: k.Name || t('common.idRef', { id: String(k.ID) }) }) });
      }
    } catch (err) {
      setNotice({ kind: 'error', text: describeError(err).message });
    } finally {
      setBusyId(null);
    }
  };

  return (
    <div class="stack">
      <div class="page-head page-head-row">
        <div class="page-title">
          <h1>{t('providers.title')}</h1>
          <p class="muted">{t('providers.intro')}</p>
        </div>
        <button type="button" class="btn btn-primary" onClick={() => { setNotice(null); setFormFor({ editing: null }); }} disabled={formFor()?.editing === null}>{t('providers.add')}</button>
      </div>
      <div class="stats">
        <StatCard label={t('providers.totalLevels')} value={latest(keys) ? formatInt(levels().length) : '–'} testId="stat-levels" />
        <StatCard label={t('providers.totalKeys')} value={latest(keys) ? formatInt(latest(keys)!.length) : '–'} testId="stat-keys" />
        <StatCard label={t('providers.activeKeys')} value={latest(keys) ? formatInt(active()) : '–'} hint={activeHint()} testId="stat-active" />
      </div>
      <Notice notice={notice()} onClose={() => setNotice(null)} />
      <Show when={formFor()} keyed>
        {(f) => <ProviderForm editing={f.editing} onDone={done} onCancel={() => setFormFor(null)} />}
      </Show>
      <Async data={keys} label={t('providers.loading')} onRetry={refetch}>
        {() => (
          <Show when={levels().length > 0} fallback={
            <div class="card empty">{t('providers.empty')}</div>
          }>
            <For each={levels()}>
              {(group) => (
                <section class="card level-group" data-testid={`level-${group.level}`}>
                  <div class="card-head">
                    <h2>{t('providers.level', { level: String(group.level) })}</h2>
                    <span class="muted small">{tn('providers.keys', group.keys.length, { n: formatInt(group.keys.length) })} · {t('providers.activeCount', { n: formatInt(group.keys.filter((k) => k.Status).length) })}</span>
                  </div>
                  <table class="table table-cards table-keys">
                    <thead><tr>
                      <th class="col-name">{t('providers.name')}</th><th class="col-provider">{t('providers.provider')}</th><th class="col-kind">{t('providers.kind')}</th>
                      <th class="col-secret">{t('providers.secret')}</th><th class="col-status">{t('providers.status')}</th><th class="col-health">{t('providers.health')}</th>
                      <th class="actions">{t('providers.actions')}</th>
                    </tr></thead>
                    <tbody>
                      <For each={group.keys}>
                        {(k) => (
                          <KeyRow k={k} health={latest(health)?.get(k.ID)} busy={busyId() === k.ID}
                            onToggle={() => act(k, 'toggle')}
                            onEdit={() => { setNotice(null); setFormFor({ editing: k }); window.scrollTo({ top: 0, behavior: 'smooth' }); }}
                            onDelete={() => act(k, 'delete')} />
                        )}
                      </For>
                    </tbody>
                  </table>
                </section>
              )}
            </For>
          </Show>
        )}
      </Async>
    </div>
  );
}
