import { createResource, createSignal, For, Show } from 'solid-js';
import { createStore, reconcile } from 'solid-js/store';
import type { ConfigKey, ConfigUpdate } from '../../../contract/config/schemas';
import { api, describeError } from '../api';
import { Async, latest } from '../ui/Async';
import { Field } from '../ui/Field';
import { Notice, type NoticeState } from '../ui/Notice';
import { jsonProblem, modelLimitsProblem } from './config-checks';
import { formatInt, formatTime } from '../ui/format';
import { rich, t, tn } from '../i18n';

type Readable = Exclude<ConfigKey, 'EMAIL_PASS'>;
type Kind = 'line' | 'text' | 'json';
/** A key's hint is its entry in the catalogue's `config.hints`; `warn` adds RESOURCES_WARN's warning. */
interface Item { key: Readable; kind: Kind; placeholder?: string; warn?: boolean }

const GROUPS: { id: 'routing' | 'limits' | 'mail'; columns?: boolean; items: Item[] }[] = [
  {
    id: 'routing',
    items: [
      { key: 'MODEL_MAPPER', kind: 'text', placeholder: 'gpt-3.5*=gpt-4o-mini, o*=gpt-4o' },
      { key: 'LEVEL_MAPPER', kind: 'text', placeholder: 'gpt-4*=2, claude*=3' },
      { key: 'MODEL_FAILOVER', kind: 'text', placeholder: 'gpt-4o=gpt-4o-mini|gpt-4.1-mini' },
      { key: 'SWITCH_OVER', kind: 'line', placeholder: '1=2, 2=3' },
      { key: 'RESOURCES', kind: 'text', placeholder: '/v1/chat/completions, /v1/embeddings', warn: true },
      { key: 'UNSUPPORTED_TOOLS', kind: 'line', placeholder: 'refuse' },
    ],
  },
  {
    id: 'limits',
    items: [
      { key: 'MODEL_LIMITS', kind: 'json', placeholder: '{"gpt-4o": {"rpm": 30, "tpm": 90000}}' },
      { key: 'PRICING', kind: 'json', placeholder: '{"ChatPricing": {"gpt-4o": {"InputText": 2.5, "OutputText": 10}}}' },
      { key: 'DEFAULT_OUTPUT_LIMIT', kind: 'line', placeholder: '32768' },
      { key: 'UNPRICED_MODEL_POLICY', kind: 'line', placeholder: 'bill:10,30' },
    ],
  },
  {
    id: 'mail',
    columns: true,
    items: [
      { key: 'XAI_MAIL', kind: 'line', placeholder: 'noreply@example.com' },
      { key: 'EMAIL_SMTP', kind: 'line', placeholder: 'smtp.example.com' },
      { key: 'EMAIL_PORT', kind: 'line', placeholder: '587' },
      { key: 'EMAIL_AUTH', kind: 'line', placeholder: 'mailer@example.com' },
    ],
  },
];

const ALL: Readable[] = GROUPS.flatMap((g) => g.items.map((i) => i.key));

function localProblem(key: Readable, value: string): string | null {
  if (key === 'MODEL_LIMITS') return modelLimitsProblem(value);
  if (key === 'PRICING') return jsonProblem(value);
  return null;
}

function ConfigItem(props: { item: Item; value: string; error: string | null; onEdit: (v: string) => void; onFormat: () => void }) {
  const id = () => `cfg-${props.item.key}`;
  const placeholder = () => props.item.placeholder && t('common.example', { example: props.item.placeholder });
  const json = () => props.item.kind === 'json';
  return (
    <Field label={props.item.key} for={id()} error={props.error}
      hint={<>{t(`config.hints.${props.item.key}`)}{props.item.warn && <strong class="warn-text"> {t('config.hints.RESOURCES_WARN')}</strong>}</>}
      counter={json() ? <button type="button" class="link-btn" onClick={() => props.onFormat()} disabled={!props.value.trim()}>{t('config.format')}</button> : undefined}>
      {props.item.kind === 'line'
        ? <input id={id()} value={props.value} placeholder={placeholder()} onInput={(e) => props.onEdit(e.currentTarget.value)} aria-invalid={!!props.error} />
        : <textarea id={id()} classList={{ mono: json() }} rows={json() ? 6 : 2} spellcheck={false} value={props.value} placeholder={placeholder()}
            onInput={(e) => props.onEdit(e.currentTarget.value)} aria-invalid={!!props.error} />}
    </Field>
  );
}

/** EMAIL_PASS is write-only: the field starts empty and is sent only when filled (or when removal is asked for). */
function PasswordField(props: { value: string; clear: boolean; error: string | null; onInput: (v: string) => void; onClear: (v: boolean) => void }) {
  return (
    <div class="field-group">
      <Field label="EMAIL_PASS" for="cfg-EMAIL_PASS" error={props.error}
        hint={t('config.hints.EMAIL_PASS')}>
        <input id="cfg-EMAIL_PASS" type="password" autocomplete="new-password" value={props.value} onInput={(e) => props.onInput(e.currentTarget.value)} />
      </Field>
      <label class="check small">
        <input type="checkbox" checked={props.clear} disabled={props.value !== ''} onChange={(e) => props.onClear(e.currentTarget.checked)} />
        {t('config.removePassword')}
      </label>
    </div>
  );
}

export function ConfigTab() {
  const [loaded, { refetch }] = createResource(async () => (await api.config.get.query()).configs);
  const [draft, setDraft] = createStore<Record<string, string>>({});
  const [serverErrors, setServerErrors] = createStore<Record<string, string | undefined>>({});
  const [password, setPassword] = createSignal('');
  const [clearPassword, setClearPassword] = createSignal(false);
  const [notice, setNotice] = createSignal<NoticeState | null>(null);
  const [busy, setBusy] = createSignal(false);

  const base = (k: Readable) => latest(loaded)?.[k] ?? '';
  const value = (k: Readable) => draft[k] ?? base(k);
  const changed = () => ALL.filter((k) => draft[k] !== undefined && draft[k] !== base(k));
  const passwordChange = () => (password() !== '' ? password() : clearPassword() ? '' : undefined);
  const changeCount = () => changed().length + (passwordChange() !== undefined ? 1 : 0);
  const errorOf = (k: string) => (k === 'EMAIL_PASS' ? null : localProblem(k as Readable, value(k as Readable))) ?? serverErrors[k] ?? null;
  const blocked = () => changed().some((k) => localProblem(k, value(k)) !== null);

  const edit = (k: Readable, v: string) => {
    setDraft(k, v);
    setServerErrors(k, undefined);
  };

  const save = async (e: SubmitEvent) => {
    e.preventDefault();
    if (blocked() || changeCount() === 0) return;
    const body: ConfigUpdate = {};
    for (const k of changed()) body[k] = value(k);
    const pass = passwordChange();
    if (pass !== undefined) body.EMAIL_PASS = pass;
    setBusy(true);
    setNotice(null);
    setServerErrors(reconcile({}));
    try {
      const r = await api.config.put.mutate(body);
      const parts = [r.updated.length ? t('config.saved', { keys: r.updated.join(', ') }) : '', r.removed.length ? t('config.removed', { keys: r.removed.join(', ') }) : ''].filter(Boolean);
      setNotice({ kind: 'success', text: t('config.sentence', { text: parts.join(t('config.partSeparator')) || t('config.nothingChanged') }) });
      setPassword('');
      setClearPassword(false);
      setDraft(reconcile({}));
      await refetch();
    } catch (err) {
      const f = describeError(err);
      if (f.field && (ALL as string[]).concat('EMAIL_PASS').includes(f.field)) {
        setServerErrors(f.field, f.message);
        document.getElementById(`cfg-${f.field}`)?.focus();
      } else setNotice({ kind: 'error', text: f.message });
    } finally {
      setBusy(false);
    }
  };

  const discard = () => {
    setDraft(reconcile({}));
    setServerErrors(reconcile({}));
    setPassword('');
    setClearPassword(false);
  };

  const pretty = (k: Readable) => {
    try { edit(k, JSON.stringify(JSON.parse(value(k)), null, 2)); } catch { /* the error is already shown */ }
  };

  return (
    <div class="stack">
      <div class="page-head">
        <h1>{t('config.title')}</h1>
        <p class="muted">{rich(t('config.intro'), { path: <code>/x-config</code> })}</p>
      </div>
      <Async data={loaded} label={t('config.loading')} onRetry={refetch}>
        {() => (
          <form class="stack" onSubmit={save} novalidate>
            <For each={GROUPS}>
              {(g) => (
                <section class="card">
                  <div class="card-head"><div class="card-title"><h2>{t(`config.groups.${g.id}.title`)}</h2><p class="muted small">{t(`config.groups.${g.id}.note`)}</p></div></div>
                  <div classList={{ 'grid-2': !!g.columns, stack: !g.columns }}>
                    <For each={g.items}>
                      {(item) => <ConfigItem item={item} value={value(item.key)} error={errorOf(item.key)} onEdit={(v) => edit(item.key, v)} onFormat={() => pretty(item.key)} />}
                    </For>
                    <Show when={g.id === 'mail'}>
                      <PasswordField value={password()} clear={clearPassword()} error={serverErrors.EMAIL_PASS ?? null}
                        onInput={(v) => { setPassword(v); setServerErrors('EMAIL_PASS', undefined); }} onClear={setClearPassword} />
                      <TestMail unsaved={changeCount() > 0} />
                    </Show>
                  </div>
                </section>
              )}
            </For>
            <Notice notice={notice()} onClose={() => setNotice(null)} />
            <div class="savebar" classList={{ 'savebar-dirty': changeCount() > 0 }}>
              <span class="muted small">{changeCount() === 0 ? t('config.noChanges') : tn('config.unsaved', changeCount(), { n: formatInt(changeCount()) })}</span>
              <button type="button" class="btn" disabled={busy() || changeCount() === 0} onClick={discard}>{t('config.discard')}</button>
              <button type="submit" class="btn btn-primary" disabled={busy() || changeCount() === 0 || blocked()}>{busy() ? t('common.saving') : t('common.saveChanges')}</button>
            </div>
          </form>
        )}
      </Async>
      <UnpricedModels />
    </div>
  );
}

/** Sends one mail with the stored (saved) settings, as alerts are sent. */
function TestMail(props: { unsaved: boolean }) {
  const [to, setTo] = createSignal('');
  const [busy, setBusy] = createSignal(false);
  const [notice, setNotice] = createSignal<NoticeState | null>(null);
  const send = async () => {
    setBusy(true);
    setNotice(null);
    try {
      const r = await api.config.testMail.mutate(to().trim() ? { To: to().trim() } : {});
      setNotice({ kind: 'success', text: t('config.testMail.sent', { to: r.accepted.join(', ') || t('config.testMail.noRecipient') }) });
    } catch (err) {
      setNotice({ kind: 'error', text: describeError(err).message });
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="field-group span-2" data-testid="test-mail">
      <Field label={t('config.testMail.label')} for="test-mail-to" hint={props.unsaved ? t('config.testMail.hintUnsaved') : t('config.testMail.hint')}>
        <div class="inline-field">
          <input id="test-mail-to" type="email" placeholder="you@example.com" value={to()} onInput={(e) => setTo(e.currentTarget.value)} />
          <button type="button" class="btn" disabled={busy()} onClick={send}>{busy() ? t('config.testMail.sending') : t('config.testMail.send')}</button>
        </div>
      </Field>
      <Notice notice={notice()} onClose={() => setNotice(null)} />
    </div>
  );
}

/** The models accounts asked for that have no price yet (`/x-conf` UnpricedModels). */
function UnpricedModels() {
  const [view, { refetch }] = createResource(() => api.config.view.query());
  return (
    <section class="card" data-testid="unpriced-models">
      <div class="card-head"><div class="card-title"><h2>{t('config.unpriced.title')}</h2>
        <p class="muted small">{t('config.unpriced.note')}</p></div></div>
      <Async data={view} label={t('common.loading')} onRetry={refetch}>
        {(v) => (
          <Show when={v.UnpricedModels.length > 0} fallback={<p class="muted">{t('common.none')}</p>}>
            <table class="table table-compact table-cards">
              <thead><tr><th>{t('config.unpriced.model')}</th><th>{t('config.unpriced.first')}</th><th>{t('config.unpriced.last')}</th></tr></thead>
              <tbody>
                <For each={v.UnpricedModels}>
                  {(m) => <tr><td class="break" data-label={t('config.unpriced.model')}><code>{m.Model}</code></td><td data-label={t('config.unpriced.first')}>{formatTime(m.FirstAt)}</td><td data-label={t('config.unpriced.last')}>{formatTime(m.LastAt)}</td></tr>}
                </For>
              </tbody>
            </table>
          </Show>
        )}
      </Async>
    </section>
  );
}
