import { createMemo, createResource, createSignal, For, Index, Show } from 'solid-js';
import { createStore, reconcile, unwrap } from 'solid-js/store';
import type { Account } from '../../../contract/accounts/schemas';
import { api, describeError } from '../api';
import { Async, latest } from '../ui/Async';
import { KeyShownOnce } from '../ui/KeyShownOnce';
import { Field } from '../ui/Field';
import { KeyValueRows } from '../ui/KeyValueRows';
import { Notice, type NoticeState } from '../ui/Notice';
import { formatCredit, formatTime } from '../ui/format';
import {
  ACL_FIELDS, LIMIT_FIELDS, accountCreate, accountPatch, blankForm, formOf, formProblems, isMoneyLimit, treeRows,
  type AccountForm, type AclField, type AclMode, type LimitField,
} from './account-form';

const LIMIT_HINTS: Record<LimitField, string> = {
  DailyLimit: 'USD per UTC day', HardLimit: 'USD per month: refused beyond', SoftLimit: 'USD per month: an alert mail',
  UserLimit: 'direct subaccounts', RPM: 'requests / minute', RPH: 'requests / hour', RPD: 'requests / day',
  TPM: 'tokens / minute', TPH: 'tokens / hour', TPD: 'tokens / day',
};
const ACL_HINTS: Record<AclField, { label: string; placeholder: string }> = {
  Resources: { label: 'Resources (paths)', placeholder: '/v1/chat/completions' },
  AllowIPs: { label: 'Allowed IPs', placeholder: '10.0.0.0/8' },
  AllowModels: { label: 'Allowed models', placeholder: 'gpt-4o*' },
  AllowLevels: { label: 'Allowed Levels', placeholder: '1' },
};

export function AccountsTab() {
  const [me] = createResource(() => api.dashboard.info.query());
  const [list, { refetch }] = createResource(() => api.accounts.descendants.query({ order: 'dna', size: 1000 }));
  const [query, setQuery] = createSignal('');
  const [selected, setSelected] = createSignal<number | null>(null);
  const [creating, setCreating] = createSignal(false);
  const [newKey, setNewKey] = createSignal<{ name: string; key: string } | null>(null);
  const [notice, setNotice] = createSignal<NoticeState | null>(null);

  const rows = createMemo(() => treeRows(latest(list) ?? [], latest(me)?.dna ?? '.', query()));
  const current = createMemo(() => (latest(list) ?? []).find((a) => a.ID === selected()) ?? null);
  const isRoot = () => latest(me)?.role === 'root';

  const done = async (text: string, keep: number | null) => {
    setNotice({ kind: 'success', text });
    await refetch();
    setSelected(keep);
  };

  return (
    <div class="stack">
      <div class="page-head page-head-row">
        <div class="page-title">
          <h1>Accounts</h1>
          <p class="muted">Every account below you: create, edit, suspend, grant credit, delete.</p>
        </div>
        <button type="button" class="btn btn-primary" onClick={() => { setCreating(true); setSelected(null); setNewKey(null); }}>New subaccount</button>
      </div>
      <Notice notice={notice()} onClose={() => setNotice(null)} />
      <Show when={newKey()}>
        {(k) => (
          <KeyShownOnce title={`API key of ${k().name}`} apiKey={k().key}>
            Store it now: it is never shown again. Hand it to the account's holder.
          </KeyShownOnce>
        )}
      </Show>
      <Show when={creating()}>
        <AccountEditor account={null} ownerFields rootCaller={isRoot()} onCancel={() => setCreating(false)}
          onCreated={async (a, key) => { setCreating(false); setNewKey({ name: a.Name, key }); await done(`Created ${a.Name} (#${a.ID}).`, a.ID); }} onSaved={() => {}} onDeleted={() => {}} />
      </Show>
      <div class="accounts-layout">
        <section class="card" aria-label="Account tree">
          <div class="card-head">
            <h2>Tree</h2>
            <input type="search" class="tree-search" aria-label="Search accounts" placeholder="Search name, email or #ID" value={query()} onInput={(e) => setQuery(e.currentTarget.value)} />
          </div>
          <Async data={list} label="Loading accounts…" onRetry={refetch}>
            {() => (
              <Show when={rows().length > 0} fallback={<p class="muted">{query() ? 'No account matches.' : 'No subaccounts yet.'}</p>}>
                <ul class="tree" role="tree" aria-label="Accounts">
                  <For each={rows()}>
                    {(r) => (
                      <li role="treeitem" aria-selected={selected() === r.account.ID} style={{ 'padding-left': `${r.depth * 18}px` }}>
                        <button type="button" class="tree-item" classList={{ 'tree-item-active': selected() === r.account.ID, 'tree-match': r.match }}
                          onClick={() => { setSelected(r.account.ID); setCreating(false); }} data-testid={`tree-${r.account.Name}`}>
                          <span class="tree-name">{r.account.Alias || r.account.Name}</span>
                          <span class="muted small">#{r.account.ID} · {formatCredit(r.account.Balance)}</span>
                          <Show when={!r.account.Status}><span class="badge badge-off">disabled</span></Show>
                          <Show when={r.account.Suspended}><span class="badge badge-warn">suspended</span></Show>
                          <Show when={r.account.Role === 'owner'}><span class="badge">Owner</span></Show>
                        </button>
                      </li>
                    )}
                  </For>
                </ul>
              </Show>
            )}
          </Async>
        </section>
        <Show when={current()} fallback={<section class="card"><p class="muted">Select an account to see and edit it.</p></section>}>
          {(a) => (
            <div class="stack">
              <AccountSummary account={a()} onChanged={(t) => done(t, a().ID)} onDeleted={(t) => done(t, null)} />
              {/* Keyed on the account and its last change, so the form starts from what is stored. */}
              <For each={[`${a().ID}:${a().UpdatedAt}`]}>
                {() => <AccountEditor account={a()} ownerFields rootCaller={isRoot()} onCancel={() => setSelected(null)} onCreated={() => {}}
                  onSaved={(t) => done(t, a().ID)} onDeleted={(t) => done(t, null)} />}
              </For>
            </div>
          )}
        </Show>
      </div>
    </div>
  );
}

/** Balance and cards, and the actions that act at once: grant credit, suspend, delete. */
function AccountSummary(props: { account: Account; onChanged: (text: string) => void; onDeleted: (text: string) => void }) {
  const [amount, setAmount] = createSignal('');
  const [days, setDays] = createSignal('');
  const [busy, setBusy] = createSignal(false);
  const [error, setError] = createSignal<string | null>(null);
  const [confirmDelete, setConfirmDelete] = createSignal(false);
  const a = () => props.account;
  const id = () => String(a().ID);
  const run = async (fn: () => Promise<string>, after: (t: string) => void) => {
    setBusy(true);
    setError(null);
    try {
      after(await fn());
    } catch (err) {
      setError(describeError(err).message);
    } finally {
      setBusy(false);
    }
  };
  const grant = (e: SubmitEvent) => {
    e.preventDefault();
    const n = Number(amount());
    if (!amount().trim() || !Number.isFinite(n) || n === 0) return setError('Credit: a non-zero amount of USD (negative takes credit back)');
    void run(async () => {
      await api.accounts.update.mutate({ identifier: id(), CreditGranted: n, ...(days().trim() ? { Days: Number(days()) } : {}) });
      setAmount('');
      setDays('');
      return n > 0 ? `Granted ${formatCredit(n)} to ${a().Name}.` : `Took ${formatCredit(-n)} back from ${a().Name}.`;
    }, props.onChanged);
  };
  return (
    <section class="card" data-testid="account-summary">
      <div class="card-head">
        <div class="card-title"><h2>{a().Alias || a().Name} <span class="muted small">#{a().ID}</span></h2>
          <p class="muted small">{a().Email} · DNA <code>{a().DNA}</code> · key …{a().KeyHint} · {a().Children} subaccounts</p></div>
        <div class="row-actions">
          <button type="button" class="btn btn-small" disabled={busy()}
            onClick={() => run(async () => { await api.accounts.update.mutate({ identifier: id(), Suspended: !a().Suspended }); return `${a().Suspended ? 'Resumed' : 'Suspended'} ${a().Name}.`; }, props.onChanged)}>
            {a().Suspended ? 'Resume' : 'Suspend'}
          </button>
          <button type="button" class="btn btn-small btn-ghost-danger" disabled={busy()} onClick={() => setConfirmDelete(true)}>Delete</button>
        </div>
      </div>
      <Show when={confirmDelete()}>
        <div class="notice notice-error" role="alert">
          <span>Delete {a().Name}? Its key stops working and its remaining credit goes back to a funded parent.</span>
          <button type="button" class="btn btn-small btn-danger" disabled={busy()}
            onClick={() => run(async () => { await api.accounts.remove.mutate({ identifier: id() }); return `Deleted ${a().Name}.`; }, props.onDeleted)}>Delete for good</button>
          <button type="button" class="btn btn-small" onClick={() => setConfirmDelete(false)}>Keep it</button>
        </div>
      </Show>
      <div class="stats stats-compact">
        <div class="stat-card"><div class="stat-label">Balance</div><div class="stat-value" data-testid="account-balance">{formatCredit(a().Balance)}</div></div>
        <div class="stat-card"><div class="stat-label">Status</div><div class="stat-value small">{!a().Status ? 'Disabled' : a().Suspended ? 'Suspended' : 'Active'}</div></div>
      </div>
      <Show when={a().CreditBalance.length > 0}>
        <table class="table table-compact table-cards">
          <thead><tr><th>Card granted</th><th class="num">Amount</th><th class="num">Left</th><th>Expires</th></tr></thead>
          <tbody>
            <For each={a().CreditBalance}>
              {(c) => <tr><td data-label="Granted">{formatTime(c.granted_at)}</td><td data-label="Amount" class="num">{formatCredit(c.amount)}</td><td data-label="Left" class="num">{formatCredit(c.balance)}</td><td data-label="Expires">{formatTime(c.expires_at)}</td></tr>}
            </For>
          </tbody>
        </table>
      </Show>
      <form class="grant" onSubmit={grant} novalidate aria-label="Grant credit">
        <Field label="Grant credit (USD)" for="grant-amount" hint="A new card; negative takes credit back.">
          <input id="grant-amount" type="number" step="0.01" value={amount()} onInput={(e) => setAmount(e.currentTarget.value)} />
        </Field>
        <Field label="Valid for (days)" for="grant-days" hint="Default 180.">
          <input id="grant-days" type="number" min="1" max="3650" step="1" value={days()} onInput={(e) => setDays(e.currentTarget.value)} />
        </Field>
        <button type="submit" class="btn btn-primary" disabled={busy()}>Grant</button>
      </form>
      <Show when={error()}><div class="notice notice-error" role="alert">{error()}</div></Show>
    </section>
  );
}

/** A list field as entries, with "everything", "nothing" (and, when creating, "as mine"). */
function AclEditor(props: { field: AclField; value: { mode: AclMode; entries: string[] }; creating: boolean; onChange: (v: { mode: AclMode; entries: string[] }) => void }) {
  const [entry, setEntry] = createSignal('');
  const id = () => `acl-${props.field}`;
  const add = () => {
    const parts = entry().split(/[\s,]+/).filter(Boolean);
    if (!parts.length) return;
    props.onChange({ mode: 'only', entries: [...new Set([...props.value.entries, ...parts])] });
    setEntry('');
  };
  const modes: { id: AclMode; label: string }[] = [
    ...(props.creating ? [{ id: 'inherit' as const, label: 'As mine' }] : []),
    { id: 'all', label: 'Everything' }, { id: 'only', label: 'Only these' }, { id: 'none', label: 'Nothing' },
  ];
  return (
    <fieldset class="subform acl" data-testid={id()}>
      <legend>{ACL_HINTS[props.field].label}</legend>
      <div class="segmented" role="radiogroup" aria-label={ACL_HINTS[props.field].label}>
        <For each={modes}>
          {(m) => <button type="button" role="radio" aria-checked={props.value.mode === m.id} classList={{ active: props.value.mode === m.id }}
            onClick={() => props.onChange({ ...props.value, mode: m.id })}>{m.label}</button>}
        </For>
      </div>
      <Show when={props.value.mode === 'only'}>
        <ul class="chips">
          <Index each={props.value.entries}>
            {(e, i) => <li class="chip"><code>{e()}</code><button type="button" aria-label={`Remove ${e()}`} onClick={() => props.onChange({ mode: 'only', entries: props.value.entries.filter((_, j) => j !== i) })}>×</button></li>}
          </Index>
        </ul>
        <div class="inline-field">
          <input id={id()} aria-label={`Add to ${ACL_HINTS[props.field].label}`} placeholder={ACL_HINTS[props.field].placeholder} value={entry()}
            onInput={(e) => setEntry(e.currentTarget.value)} onKeyDown={(e) => { if (e.key === 'Enter') { e.preventDefault(); add(); } }} />
          <button type="button" class="btn btn-small" onClick={add}>Add</button>
        </div>
      </Show>
    </fieldset>
  );
}

/** Create (account null) or edit every field group the caller may set; only changed fields are sent. */
function AccountEditor(props: {
  account: Account | null; ownerFields: boolean; rootCaller: boolean;
  onCancel: () => void; onCreated: (a: Account, key: string) => void; onSaved: (text: string) => void; onDeleted: (text: string) => void;
}) {
  const creating = () => props.account === null;
  const base = props.account ? formOf(props.account) : blankForm();
  const [form, setForm] = createStore<AccountForm>(structuredClone(base));
  const [credit, setCredit] = createSignal('');
  const [days, setDays] = createSignal('');
  const [errors, setErrors] = createStore<Record<string, string | undefined>>({});
  const [busy, setBusy] = createSignal(false);
  const [failure, setFailure] = createSignal<string | null>(null);
  const pre = creating() ? 'new' : 'edit';

  const submit = async (e: SubmitEvent) => {
    e.preventDefault();
    const f = unwrap(form);
    const found = formProblems(f, creating());
    setErrors(reconcile(found));
    setFailure(null);
    if (Object.keys(found).length) return;
    setBusy(true);
    try {
      if (creating()) {
        const r = await api.accounts.create.mutate(accountCreate(f, credit(), days(), props.ownerFields));
        props.onCreated(r.User, r.User.SecretKey);
      } else {
        const { patch, clearModelLimits } = accountPatch(f, base, props.ownerFields);
        if (Object.keys(patch).length === 0) return setFailure('Nothing changed.');
        const identifier = String(props.account!.ID);
        if (clearModelLimits) await api.accounts.update.mutate({ identifier, ModelLimits: '*' });
        await api.accounts.update.mutate({ identifier, ...patch });
        props.onSaved(`Saved ${Object.keys(patch).join(', ')} of ${f.Name}.`);
      }
    } catch (err) {
      const d = describeError(err);
      if (d.field) setErrors(d.field, d.message);
      setFailure(d.message);
    } finally {
      setBusy(false);
    }
  };

  const text = (k: 'Name' | 'Email' | 'Alias' | 'BillingEmail' | 'QRCode', label: string, hint?: string, type = 'text') => (
    <Field label={label} for={`${pre}-${k}`} error={errors[k]} hint={hint}>
      <input id={`${pre}-${k}`} type={type} value={form[k]} onInput={(e) => setForm(k, e.currentTarget.value)} />
    </Field>
  );
  const numberField = (k: 'Rates' | 'Factor' | 'Level' | 'Gear' | 'Tier', label: string, hint: string) => (
    <Field label={label} for={`${pre}-${k}`} error={errors[k]} hint={hint}>
      <input id={`${pre}-${k}`} type="number" step={k === 'Rates' || k === 'Factor' ? '0.01' : '1'} min="0" value={form[k]} onInput={(e) => setForm(k, e.currentTarget.value)} />
    </Field>
  );

  return (
    <form class="card form-card" onSubmit={submit} novalidate aria-label={creating() ? 'New subaccount' : `Edit ${props.account!.Name}`} data-testid={creating() ? 'account-create' : 'account-edit'}>
      <h2>{creating() ? 'New subaccount' : 'Edit account'}</h2>
      <fieldset class="subform grid-2">
        <legend>Profile</legend>
        {text('Name', 'Name', '4-63 letters, digits, "_", "-", "."; unique in your tenant.')}
        {text('Email', 'Email', undefined, 'email')}
        {text('Alias', 'Display name')}
        {text('BillingEmail', 'Billing email', 'Where alert mail and bills go; empty uses Email.', 'email')}
        {text('QRCode', 'Payment QR code')}
      </fieldset>
      <Show when={creating()}>
        <fieldset class="subform grid-2">
          <legend>Credit</legend>
          <Field label="Credit granted (USD)" for="new-credit" error={errors.CreditGranted} hint="The first card; a user account needs at least the minimum balance.">
            <input id="new-credit" type="number" step="0.01" min="0" value={credit()} onInput={(e) => setCredit(e.currentTarget.value)} />
          </Field>
          <Field label="Valid for (days)" for="new-days" error={errors.Days} hint="Default 180.">
            <input id="new-days" type="number" min="1" max="3650" value={days()} onInput={(e) => setDays(e.currentTarget.value)} />
          </Field>
        </fieldset>
      </Show>
      <fieldset class="subform">
        <legend>Status</legend>
        <label class="check"><input type="checkbox" checked={form.Status} onChange={(e) => setForm('Status', e.currentTarget.checked)} /> Enabled (a disabled account's key is refused)</label>
        <label class="check"><input type="checkbox" checked={form.Suspended} onChange={(e) => setForm('Suspended', e.currentTarget.checked)} /> Suspended (no proxy calls, no manage permission)</label>
        <label class="check"><input type="checkbox" checked={form.AutoQuota} onChange={(e) => setForm('AutoQuota', e.currentTarget.checked)} /> AutoQuota (each grant raises HardLimit; SoftLimit 80 %)</label>
      </fieldset>
      <fieldset class="subform limits-grid">
        <legend>Limits <span class="muted small">(empty: none)</span></legend>
        <For each={LIMIT_FIELDS}>
          {(l) => (
            <Field label={l} for={`${pre}-${l}`} error={errors[l]} hint={LIMIT_HINTS[l]}>
              <input id={`${pre}-${l}`} type="number" min="0" step={isMoneyLimit(l) ? '0.01' : '1'} value={form.limits[l]} onInput={(e) => setForm('limits', l, e.currentTarget.value)} />
            </Field>
          )}
        </For>
      </fieldset>
      <fieldset class="subform">
        <legend>Per-model limits</legend>
        <div class="kv">
          <Index each={form.ModelLimits}>
            {(r, i) => (
              <div class="kv-row kv-row-3">
                <input aria-label={`Model ${i + 1}`} placeholder="gpt-4o" value={r().model} onInput={(e) => setForm('ModelLimits', i, 'model', e.currentTarget.value)} />
                <input aria-label={`rpm ${i + 1}`} placeholder="rpm" inputMode="numeric" value={r().rpm} onInput={(e) => setForm('ModelLimits', i, 'rpm', e.currentTarget.value)} />
                <input aria-label={`tpm ${i + 1}`} placeholder="tpm" inputMode="numeric" value={r().tpm} onInput={(e) => setForm('ModelLimits', i, 'tpm', e.currentTarget.value)} />
                <button type="button" class="btn btn-small btn-ghost" onClick={() => setForm('ModelLimits', form.ModelLimits.filter((_, j) => j !== i))}>Remove</button>
              </div>
            )}
          </Index>
          <button type="button" class="btn btn-small" onClick={() => setForm('ModelLimits', [...form.ModelLimits, { model: '', rpm: '', tpm: '' }])}>Add model limit</button>
        </div>
        <Show when={errors.ModelLimits}><div class="field-error" role="alert">{errors.ModelLimits}</div></Show>
      </fieldset>
      <div class="grid-2">
        <For each={ACL_FIELDS}>
          {(f) => <AclEditor field={f} value={form.acl[f]} creating={creating()} onChange={(v) => setForm('acl', f, v)} />}
        </For>
      </div>
      <Show when={errors.Resources || errors.AllowIPs || errors.AllowModels || errors.AllowLevels}>
        <div class="field-error" role="alert">{errors.Resources ?? errors.AllowIPs ?? errors.AllowModels ?? errors.AllowLevels}</div>
      </Show>
      <fieldset class="subform">
        <legend>Model mapping</legend>
        <KeyValueRows id={`${pre}-model-mapper`} rows={form.ModelMapper} onChange={(r) => setForm('ModelMapper', r)} keyLabel="Requested (pattern)" valueLabel="Model" keyPlaceholder="gpt-3.5*" valuePlaceholder="gpt-4o-mini" />
        <Show when={errors.ModelMapper}><div class="field-error" role="alert">{errors.ModelMapper}</div></Show>
      </fieldset>
      <Show when={props.ownerFields}>
        <fieldset class="subform grid-2">
          <legend>Routing and billing</legend>
          {numberField('Rates', 'Rates', 'Price multiplier (default: yours).')}
          {numberField('Factor', 'Factor', 'Billing coefficient with Rates.')}
          {numberField('Level', 'Level', 'Default key pool.')}
          {numberField('Gear', 'Gear', 'Routing gear (filter G{n}).')}
          {numberField('Tier', 'Tier', 'Account tier (filter T{n}).')}
          <Show when={props.rootCaller}>
            <Field label="Role" for={`${pre}-Role`} error={errors.Role} hint="An Owner is a tenant of its own (TENANCY=multi).">
              <select id={`${pre}-Role`} value={form.Role} onChange={(e) => setForm('Role', e.currentTarget.value as 'user' | 'owner')}>
                <option value="user">user</option><option value="owner">owner</option>
              </select>
            </Field>
          </Show>
          <div class="span-2">
            <h3 class="sublegend">Level mapping</h3>
            <KeyValueRows id={`${pre}-level-mapper`} rows={form.LevelMapper} onChange={(r) => setForm('LevelMapper', r)} keyLabel="Model (pattern)" valueLabel="Level" keyPlaceholder="gpt-4*" valuePlaceholder="2" />
            <Show when={errors.LevelMapper}><div class="field-error" role="alert">{errors.LevelMapper}</div></Show>
          </div>
        </fieldset>
      </Show>
      <Show when={failure()}><div class="notice notice-error" role="alert">{failure()}</div></Show>
      <div class="form-actions">
        <button type="button" class="btn" onClick={() => props.onCancel()} disabled={busy()}>Cancel</button>
        <button type="submit" class="btn btn-primary" disabled={busy()}>{busy() ? 'Saving…' : creating() ? 'Create subaccount' : 'Save changes'}</button>
      </div>
    </form>
  );
}
