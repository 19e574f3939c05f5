import { createResource, createSignal, For, Show } from 'solid-js';
import { createStore, reconcile } from 'solid-js/store';
import type { ConfigKey, ConfigUpdate } from '../../../contract/config/schemas';
import { api, describeError } from '../api';
import { Async, latest } from '../ui/Async';
import { Field } from '../ui/Field';
import { Notice, type NoticeState } from '../ui/Notice';
import { jsonProblem, modelLimitsProblem } from './config-checks';
import { formatTime } from '../ui/format';

type Readable = Exclude<ConfigKey, 'EMAIL_PASS'>;
type Kind = 'line' | 'text' | 'json';
interface Item { key: Readable; kind: Kind; hint: string; placeholder?: string; warn?: string }

const GROUPS: { title: string; note: string; columns?: boolean; items: Item[] }[] = [
  {
    title: 'Routing',
    note: 'How requested models map to models and Levels, and where traffic goes when a Level fails.',
    items: [
      { key: 'MODEL_MAPPER', kind: 'text', hint: 'pattern=model, comma-separated; * is a wildcard.', placeholder: 'gpt-3.5*=gpt-4o-mini, o*=gpt-4o' },
      { key: 'LEVEL_MAPPER', kind: 'text', hint: 'pattern=Level, comma-separated.', placeholder: 'gpt-4*=2, claude*=3' },
      { key: 'MODEL_FAILOVER', kind: 'text', hint: 'model=fallback|fallback, comma-separated; fallbacks are tried in order.', placeholder: 'gpt-4o=gpt-4o-mini|gpt-4.1-mini' },
      { key: 'SWITCH_OVER', kind: 'line', hint: 'primary=backup Levels; traffic moves after more than 5 abnormal results within a minute.', placeholder: '1=2, 2=3' },
      { key: 'RESOURCES', kind: 'text', hint: 'Allowed path prefixes, separated by commas or spaces; empty allows every path.', placeholder: '/v1/chat/completions, /v1/embeddings', warn: 'A wrong value can make the API inaccessible to every account.' },
    ],
  },
  {
    title: 'Limits and pricing',
    note: 'JSON values. Default prices and output limits come from the model catalogue bundled with this gateway (OpenAI, Anthropic, Google, Mistral, DeepSeek, xAI, Cohere, Perplexity, Moonshot, and open models on Groq, Cerebras, Together and Fireworks, dated variants included; /v1/models lists them). Saving PRICING takes effect immediately; empty restores the default prices.',
    items: [
      { key: 'MODEL_LIMITS', kind: 'json', hint: 'Object keyed by model, each with integer rpm and tpm.', placeholder: '{"gpt-4o": {"rpm": 30, "tpm": 90000}}' },
      { key: 'PRICING', kind: 'json', hint: 'Only the differences from the catalogue\'s prices, field by field (sections such as ChatPricing, keyed by model; USD per million tokens). At most 128 KiB and 1024 entries.', placeholder: '{"ChatPricing": {"gpt-4o": {"InputText": 2.5, "OutputText": 10}}}' },
      { key: 'DEFAULT_OUTPUT_LIMIT', kind: 'line', hint: 'Output tokens a call without max_tokens holds from the balance while it runs, for a model the catalogue gives no output limit (your PRICING-only models among them). Empty: 131072.', placeholder: '32768' },
      { key: 'UNPRICED_MODEL_POLICY', kind: 'line', hint: 'A model no price table knows: refuse (the default, empty) answers 403 model_not_priced; bill:<InputText>,<OutputText> serves it at that fallback price (USD per million tokens).', placeholder: 'bill:10,30' },
    ],
  },
  {
    title: 'Mail',
    note: 'Alerts (SoftLimit reached, balance low, a provider key disabled or out of rotation for long, a Level switched over) are mailed with these settings, to the account concerned and to you.',
    columns: true,
    items: [
      { key: 'XAI_MAIL', kind: 'line', hint: 'Your address: alerts are sent from it, and your copy goes to it (empty: sent from EMAIL_AUTH, your copy to your account\'s email).', placeholder: 'noreply@example.com' },
      { key: 'EMAIL_SMTP', kind: 'line', hint: 'SMTP server host.', placeholder: 'smtp.example.com' },
      { key: 'EMAIL_PORT', kind: 'line', hint: 'SMTP port (1-65535).', placeholder: '587' },
      { key: 'EMAIL_AUTH', kind: 'line', hint: 'Mailbox used to authenticate.', placeholder: 'mailer@example.com' },
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
  const placeholder = () => props.item.placeholder && `e.g. ${props.item.placeholder}`;
  const json = () => props.item.kind === 'json';
  return (
    <Field label={props.item.key} for={id()} error={props.error}
      hint={<>{props.item.hint}{props.item.warn && <strong class="warn-text"> {props.item.warn}</strong>}</>}
      counter={json() ? <button type="button" class="link-btn" onClick={() => props.onFormat()} disabled={!props.value.trim()}>Format</button> : undefined}>
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
        hint="Write-only: the stored password is never shown. Leave empty to keep it; it is sent only when you type a new one.">
        <input id="cfg-EMAIL_PASS" type="password" autocomplete="new-password" value={props.value} onInput={(e) => props.onInput(e.currentTarget.value)} />
      </Field>
      <label class="check small">
        <input type="checkbox" checked={props.clear} disabled={props.value !== ''} onChange={(e) => props.onClear(e.currentTarget.checked)} />
        Remove the stored password
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
      const parts = [r.updated.length ? `Saved ${r.updated.join(', ')}` : '', r.removed.length ? `Removed ${r.removed.join(', ')}` : ''].filter(Boolean);
      setNotice({ kind: 'success', text: `${parts.join('. ') || 'Nothing changed'}.` });
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
        <h1>System configuration</h1>
        <p class="muted">The Owner configuration keys (<code>/x-config</code>). An empty value removes the key.</p>
      </div>
      <Async data={loaded} label="Loading configuration…" onRetry={refetch}>
        {() => (
          <form class="stack" onSubmit={save} novalidate>
            <For each={GROUPS}>
              {(g) => (
                <section class="card">
                  <div class="card-head"><div class="card-title"><h2>{g.title}</h2><p class="muted small">{g.note}</p></div></div>
                  <div classList={{ 'grid-2': !!g.columns, stack: !g.columns }}>
                    <For each={g.items}>
                      {(item) => <ConfigItem item={item} value={value(item.key)} error={errorOf(item.key)} onEdit={(v) => edit(item.key, v)} onFormat={() => pretty(item.key)} />}
                    </For>
                    <Show when={g.title === 'Mail'}>
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
              <span class="muted small">{changeCount() === 0 ? 'No unsaved changes' : `${changeCount()} unsaved ${changeCount() === 1 ? 'change' : 'changes'}`}</span>
              <button type="button" class="btn" disabled={busy() || changeCount() === 0} onClick={discard}>Discard</button>
              <button type="submit" class="btn btn-primary" disabled={busy() || changeCount() === 0 || blocked()}>{busy() ? 'Saving…' : 'Save changes'}</button>
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
      setNotice({ kind: 'success', text: `Test mail sent; the server accepted ${r.accepted.join(', ') || 'no recipient'}.` });
    } catch (err) {
      setNotice({ kind: 'error', text: describeError(err).message });
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="field-group span-2" data-testid="test-mail">
      <Field label="Send a test mail" for="test-mail-to" hint={props.unsaved ? 'Uses the saved settings: save your changes first.' : 'Uses the saved settings. Empty sends it to you (XAI_MAIL, else your account\'s email).'}>
        <div class="inline-field">
          <input id="test-mail-to" type="email" placeholder="you@example.com" value={to()} onInput={(e) => setTo(e.currentTarget.value)} />
          <button type="button" class="btn" disabled={busy()} onClick={send}>{busy() ? 'Sending…' : 'Send a test mail'}</button>
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
      <div class="card-head"><div class="card-title"><h2>Requested models without a price</h2>
        <p class="muted small">Refused or billed at the fallback according to UNPRICED_MODEL_POLICY; a model leaves this list once PRICING prices it.</p></div></div>
      <Async data={view} label="Loading…" onRetry={refetch}>
        {(v) => (
          <Show when={v.UnpricedModels.length > 0} fallback={<p class="muted">None so far.</p>}>
            <table class="table table-compact">
              <thead><tr><th>Model</th><th>First requested</th><th>Last requested</th></tr></thead>
              <tbody>
                <For each={v.UnpricedModels}>
                  {(m) => <tr><td class="break"><code>{m.Model}</code></td><td>{formatTime(m.FirstAt)}</td><td>{formatTime(m.LastAt)}</td></tr>}
                </For>
              </tbody>
            </table>
          </Show>
        )}
      </Async>
    </section>
  );
}
