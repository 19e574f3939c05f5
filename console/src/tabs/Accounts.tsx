import { createMemo, createResource, createSignal, For, Index, Show } from 'solid-js';
import { createStore, reconcile, unwrap } from 'solid-js/store';
import type { Account } from '../../../contract/accounts/schemas';
import { api, describeError } from '../api';
import { Async, latest } from '../ui/Async';
import { KeyShownOnce } from '../ui/KeyShownOnce';
import { Field } from '../ui/Field';
import { KeyValueRows } from '../ui/KeyValueRows';
import { Notice, type NoticeState } from '../ui/Notice';
import { formatInt, formatMoney, formatTime } from '../ui/format';
import { t, tn } from '../i18n';
import {
  ACL_FIELDS, LIMIT_FIELDS, accountCreate, accountPatch, blankForm, formOf, formProblems, isMoneyLimit, treeRows,
  type AccountForm, type AclField, type AclMode, type LimitField,
} from './account-form';

const ACL_PLACEHOLDERS: Record<AclField, string> = { Resources: '/v1/chat/completions', AllowIPs: '10.0.0.0/8', AllowModels: 'gpt-4o*', AllowLevels: '1' };

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
          <h1>{t('accounts.title')}</h1>
          <p class="muted">{t('accounts.intro')}</p>
        </div>
        <button type="button" class="btn btn-primary" onClick={() => { setCreating(true); setSelected(null); setNewKey(null); }}>{t('accounts.newSubaccount')}</button>
      </div>
      <Notice notice={notice()} onClose={() => setNotice(null)} />
      <Show when={newKey()}>
        {(k) => (
          <KeyShownOnce title={t('accounts.keyOf', { name: k().name })} apiKey={k().key}>{t('accounts.storeKey')}</KeyShownOnce>
        )}
      </Show>
      <Show when={creating()}>
        <AccountEditor account={null} ownerFields rootCaller={isRoot()} onCancel={() => setCreating(false)}
          onCreated={async (a, key) => { setCreating(false); setNewKey({ name: a.Name, key }); await done(t('accounts.created', { name: a.Name, id: String(a.ID) }), a.ID); }} onSaved={() => {}} onDeleted={() => {}} />
      </Show>
      <div class="accounts-layout">
        <section class="card" aria-label={t('accounts.tree')}>
          <div class="card-head">
            <h2>{t('accounts.treeHeading')}</h2>
            <input type="search" class="tree-search" aria-label={t('accounts.search')} placeholder={t('accounts.searchPlaceholder')} value={query()} onInput={(e) => setQuery(e.currentTarget.value)} />
          </div>
          <Async data={list} label={t('accounts.loading')} onRetry={refetch}>
            {() => (
              <Show when={rows().length > 0} fallback={<p class="muted">{query() ? t('accounts.noMatch') : t('accounts.noSubaccounts')}</p>}>
                <ul class="tree" role="tree" aria-label={t('accounts.listLabel')}>
                  <For each={rows()}>
                    {(r) => (
                      <li role="treeitem" aria-selected={selected() === r.account.ID} style={{ 'padding-left': `${r.depth * 18}px` }}>
                        <button type="button" class="tree-item" classList={{ 'tree-item-active': selected() === r.account.ID, 'tree-match': r.match }}
                          onClick={() => { setSelected(r.account.ID); setCreating(false); }} data-testid={`tree-${r.account.Name}`}>
                          <span class="tree-name">{r.account.Alias || r.account.Name}</span>
                          <span class="muted small">{t('common.idRef', { id: String(r.account.ID) })} · {formatMoney(r.account.Balance)}</span>
                          <Show when={!r.account.Status}><span class="badge badge-off">{t('accounts.disabledBadge')}</span></Show>
                          <Show when={r.account.Suspended}><span class="badge badge-warn">{t('accounts.suspendedBadge')}</span></Show>
                          <Show when={r.account.Role === 'owner'}><span class="badge">{t('common.owner')}</span></Show>
                        </button>
                      </li>
                    )}
                  </For>
                </ul>
              </Show>
            )}
          </Async>
        </section>
        <Show when={current()} fallback={<section class="card"><p class="muted">{t('accounts.selectHint')}</p></section>}>
          {(a) => (
            <div class="stack">
              <AccountSummary account={a()} onChanged={(text) => done(text, a().ID)} onDeleted={(text) => done(text, null)} />
              {/* Keyed on the account and its last change, so the form starts from what is stored. */}
              <For each={[`${a().ID}:${a().UpdatedAt}`]}>
                {() => <AccountEditor account={a()} ownerFields rootCaller={isRoot()} onCancel={() => setSelected(null)} onCreated={() => {}}
                  onSaved={(text) => done(text, a().ID)} onDeleted={(text) => done(text, null)} />}
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
  const run = async (fn: () => Promise<string>, after: (text: string) => void) => {
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
    if (!amount().trim() || !Number.isFinite(n) || n === 0) return setError(t('accounts.summary.creditProblem'));
    void run(async () => {
      await api.accounts.update.mutate({ identifier: id(), CreditGranted: n, ...(days().trim() ? { Days: Number(days()) } : {}) });
      setAmount('');
      setDays('');
      return n > 0 ? t('accounts.summary.granted', { amount: formatMoney(n), name: a().Name }) : t('accounts.summary.tookBack', { amount: formatMoney(-n), name: a().Name });
    }, props.onChanged);
  };
  return (
    <section class="card" data-testid="account-summary">
      <div class="card-head">
        <div class="card-title"><h2>{a().Alias || a().Name} <span class="muted small">{t('common.idRef', { id: String(a().ID) })}</span></h2>
          <p class="muted small">{a().Email} · {t('accounts.summary.dna')} <code>{a().DNA}</code> · {t('accounts.summary.key', { hint: a().KeyHint })} · {tn('accounts.summary.children', a().Children, { n: formatInt(a().Children) })}</p></div>
        <div class="row-actions">
          <button type="button" class="btn btn-small" disabled={busy()}
            onClick={() => run(async () => { await api.accounts.update.mutate({ identifier: id(), Suspended: !a().Suspended }); return t(a().Suspended ? 'accounts.summary.resumed' : 'accounts.summary.suspended', { name: a().Name }); }, props.onChanged)}>
            {a().Suspended ? t('accounts.summary.resume') : t('accounts.summary.suspend')}
          </button>
          <button type="button" class="btn btn-small btn-ghost-danger" disabled={busy()} onClick={() => setConfirmDelete(true)}>{t('common.delete')}</button>
        </div>
      </div>
      <Show when={confirmDelete()}>
        <div class="notice notice-error" role="alert">
          <span>{t('accounts.summary.confirmDelete', { name: a().Name })}</span>
          <button type="button" class="btn btn-small btn-danger" disabled={busy()}
            onClick={() => run(async () => { await api.accounts.remove.mutate({ identifier: id() }); return t('accounts.summary.deleted', { name: a().Name }); }, props.onDeleted)}>{t('accounts.summary.deleteForGood')}</button>
          <button type="button" class="btn btn-small" onClick={() => setConfirmDelete(false)}>{t('accounts.summary.keep')}</button>
        </div>
      </Show>
      <div class="stats stats-compact">
        <div class="stat-card"><div class="stat-label">{t('accounts.summary.balance')}</div><div class="stat-value" data-testid="account-balance">{formatMoney(a().Balance)}</div></div>
        <div class="stat-card"><div class="stat-label">{t('accounts.summary.status')}</div><div class="stat-value small">{!a().Status ? t('accounts.summary.disabled') : a().Suspended ? t('accounts.summary.suspendedState') : t('accounts.summary.active')}</div></div>
      </div>
      <Show when={a().CreditBalance.length > 0}>
        <table class="table table-compact table-cards">
          <thead><tr><th>{t('accounts.summary.cardGranted')}</th><th class="num">{t('accounts.summary.amount')}</th><th class="num">{t('accounts.summary.left')}</th><th>{t('accounts.summary.expires')}</th></tr></thead>
          <tbody>
            <For each={a().CreditBalance}>
              {(c) => <tr><td data-label={t('accounts.summary.granted_')}>{formatTime(c.granted_at)}</td><td data-label={t('accounts.summary.amount')} class="num">{formatMoney(c.amount)}</td><td data-label={t('accounts.summary.left')} class="num">{formatMoney(c.balance)}</td><td data-label={t('accounts.summary.expires')}>{formatTime(c.expires_at)}</td></tr>}
            </For>
          </tbody>
        </table>
      </Show>
      <form class="grant" onSubmit={grant} novalidate aria-label={t('accounts.summary.grantForm')}>
        <Field label={t('accounts.summary.grantLabel')} for="grant-amount" hint={t('accounts.summary.grantHint')}>
          <input id="grant-amount" type="number" step="0.01" value={amount()} onInput={(e) => setAmount(e.currentTarget.value)} />
        </Field>
        <Field label={t('accounts.summary.validFor')} for="grant-days" hint={t('accounts.summary.defaultDays')}>
          <input id="grant-days" type="number" min="1" max="3650" step="1" value={days()} onInput={(e) => setDays(e.currentTarget.value)} />
        </Field>
        <button type="submit" class="btn btn-primary" disabled={busy()}>{t('accounts.summary.grant')}</button>
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
  const modes = (): AclMode[] => [...(props.creating ? ['inherit' as const] : []), 'all', 'only', 'none'];
  const label = () => t(`accounts.acl.${props.field}`);
  return (
    <fieldset class="subform acl" data-testid={id()}>
      <legend>{label()}</legend>
      <div class="segmented" role="radiogroup" aria-label={label()}>
        <For each={modes()}>
          {(m) => <button type="button" role="radio" aria-checked={props.value.mode === m} classList={{ active: props.value.mode === m }}
            onClick={() => props.onChange({ ...props.value, mode: m })}>{t(`accounts.acl.${m}`)}</button>}
        </For>
      </div>
      <Show when={props.value.mode === 'only'}>
        <ul class="chips">
          <Index each={props.value.entries}>
            {(e, i) => <li class="chip"><code>{e()}</code><button type="button" aria-label={t('accounts.acl.remove', { entry: e() })} onClick={() => props.onChange({ mode: 'only', entries: props.value.entries.filter((_, j) => j !== i) })}>×</button></li>}
          </Index>
        </ul>
        <div class="inline-field">
          <input id={id()} aria-label={t('accounts.acl.addTo', { label: label() })} placeholder={ACL_PLACEHOLDERS[props.field]} value={entry()}
            onInput={(e) => setEntry(e.currentTarget.value)} onKeyDown={(e) => { if (e.key === 'Enter') { e.preventDefault(); add(); } }} />
          <button type="button" class="btn btn-small" onClick={add}>{t('common.add')}</button>
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
        if (Object.keys(patch).length === 0) return setFailure(t('accounts.editor.nothingChanged'));
        const identifier = String(props.account!.ID);
        if (clearModelLimits) await api.accounts.update.mutate({ identifier, ModelLimits: '*' });
        await api.accounts.update.mutate({ identifier, ...patch });
        props.onSaved(t('accounts.editor.saved', { fields: Object.keys(patch).join(', '), name: f.Name }));
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
    <form class="card form-card" onSubmit={submit} novalidate aria-label={creating() ? t('accounts.editor.newLabel') : t('accounts.editor.editLabel', { name: props.account!.Name })} data-testid={creating() ? 'account-create' : 'account-edit'}>
      <h2>{creating() ? t('accounts.editor.newLabel') : t('accounts.editor.editHeading')}</h2>
      <fieldset class="subform grid-2">
        <legend>{t('accounts.editor.profile')}</legend>
        {text('Name', t('accounts.editor.name'), t('accounts.editor.nameHint'))}
        {text('Email', t('accounts.editor.email'), undefined, 'email')}
        {text('Alias', t('accounts.editor.alias'))}
        {text('BillingEmail', t('accounts.editor.billingEmail'), t('accounts.editor.billingEmailHint'), 'email')}
        {text('QRCode', t('accounts.editor.qrCode'))}
      </fieldset>
      <Show when={creating()}>
        <fieldset class="subform grid-2">
          <legend>{t('accounts.editor.credit')}</legend>
          <Field label={t('accounts.editor.creditGranted')} for="new-credit" error={errors.CreditGranted} hint={t('accounts.editor.creditGrantedHint')}>
            <input id="new-credit" type="number" step="0.01" min="0" value={credit()} onInput={(e) => setCredit(e.currentTarget.value)} />
          </Field>
          <Field label={t('accounts.summary.validFor')} for="new-days" error={errors.Days} hint={t('accounts.summary.defaultDays')}>
            <input id="new-days" type="number" min="1" max="3650" value={days()} onInput={(e) => setDays(e.currentTarget.value)} />
          </Field>
        </fieldset>
      </Show>
      <fieldset class="subform">
        <legend>{t('accounts.editor.status')}</legend>
        <label class="check"><input type="checkbox" checked={form.Status} onChange={(e) => setForm('Status', e.currentTarget.checked)} /> {t('accounts.editor.enabled')}</label>
        <label class="check"><input type="checkbox" checked={form.Suspended} onChange={(e) => setForm('Suspended', e.currentTarget.checked)} /> {t('accounts.editor.suspended')}</label>
        <label class="check"><input type="checkbox" checked={form.AutoQuota} onChange={(e) => setForm('AutoQuota', e.currentTarget.checked)} /> {t('accounts.editor.autoQuota')}</label>
      </fieldset>
      <fieldset class="subform limits-grid">
        <legend>{t('accounts.editor.limits')} <span class="muted small">{t('accounts.editor.limitsEmpty')}</span></legend>
        <For each={LIMIT_FIELDS}>
          {(l) => (
            <Field label={l} for={`${pre}-${l}`} error={errors[l]} hint={t(`accounts.limitHints.${l}`)}>
              <input id={`${pre}-${l}`} type="number" min="0" step={isMoneyLimit(l) ? '0.01' : '1'} value={form.limits[l]} onInput={(e) => setForm('limits', l, e.currentTarget.value)} />
            </Field>
          )}
        </For>
      </fieldset>
      <fieldset class="subform">
        <legend>{t('accounts.editor.modelLimits')}</legend>
        <div class="kv">
          <Index each={form.ModelLimits}>
            {(r, i) => (
              <div class="kv-row kv-row-3">
                <input aria-label={t('accounts.editor.modelRow', { n: String(i + 1) })} placeholder="gpt-4o" value={r().model} onInput={(e) => setForm('ModelLimits', i, 'model', e.currentTarget.value)} />
                <input aria-label={`rpm ${i + 1}`} placeholder="rpm" inputMode="numeric" value={r().rpm} onInput={(e) => setForm('ModelLimits', i, 'rpm', e.currentTarget.value)} />
                <input aria-label={`tpm ${i + 1}`} placeholder="tpm" inputMode="numeric" value={r().tpm} onInput={(e) => setForm('ModelLimits', i, 'tpm', e.currentTarget.value)} />
                <button type="button" class="btn btn-small btn-ghost" onClick={() => setForm('ModelLimits', form.ModelLimits.filter((_, j) => j !== i))}>{t('common.remove')}</button>
              </div>
            )}
          </Index>
          <button type="button" class="btn btn-small" onClick={() => setForm('ModelLimits', [...form.ModelLimits, { model: '', rpm: '', tpm: '' }])}>{t('accounts.editor.addModelLimit')}</button>
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
        <legend>{t('accounts.editor.modelMapping')}</legend>
        <KeyValueRows id={`${pre}-model-mapper`} rows={form.ModelMapper} onChange={(r) => setForm('ModelMapper', r)} keyLabel={t('accounts.editor.requestedPattern')} valueLabel={t('accounts.editor.model')} keyPlaceholder="gpt-3.5*" valuePlaceholder="gpt-4o-mini" />
        <Show when={errors.ModelMapper}><div class="field-error" role="alert">{errors.ModelMapper}</div></Show>
      </fieldset>
      <Show when={props.ownerFields}>
        <fieldset class="subform grid-2">
          <legend>{t('accounts.editor.routing')}</legend>
          {numberField('Rates', 'Rates', t('accounts.editor.ratesHint'))}
          {numberField('Factor', 'Factor', t('accounts.editor.factorHint'))}
          {numberField('Level', 'Level', t('accounts.editor.levelHint'))}
          {numberField('Gear', 'Gear', t('accounts.editor.gearHint'))}
          {numberField('Tier', 'Tier', t('accounts.editor.tierHint'))}
          <Show when={props.rootCaller}>
            <Field label={t('accounts.editor.role')} for={`${pre}-Role`} error={errors.Role} hint={t('accounts.editor.roleHint')}>
              <select id={`${pre}-Role`} value={form.Role} onChange={(e) => setForm('Role', e.currentTarget.value as 'user' | 'owner')}>
                <option value="user">user</option><option value="owner">owner</option>
              </select>
            </Field>
          </Show>
          <div class="span-2">
            <h3 class="sublegend">{t('accounts.editor.levelMapping')}</h3>
            <KeyValueRows id={`${pre}-level-mapper`} rows={form.LevelMapper} onChange={(r) => setForm('LevelMapper', r)} keyLabel={t('accounts.editor.modelPattern')} valueLabel={t('accounts.editor.level')} keyPlaceholder="gpt-4*" valuePlaceholder="2" />
            <Show when={errors.LevelMapper}><div class="field-error" role="alert">{errors.LevelMapper}</div></Show>
          </div>
        </fieldset>
      </Show>
      <Show when={failure()}><div class="notice notice-error" role="alert">{failure()}</div></Show>
      <div class="form-actions">
        <button type="button" class="btn" onClick={() => props.onCancel()} disabled={busy()}>{t('common.cancel')}</button>
        <button type="submit" class="btn btn-primary" disabled={busy()}>{busy() ? t('common.saving') : creating() ? t('accounts.editor.create') : t('common.saveChanges')}</button>
      </div>
    </form>
  );
}
