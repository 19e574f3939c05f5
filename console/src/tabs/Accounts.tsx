import { createMemo, createResource, createSignal, For, Index, Show } from 'solid-js';
import { createStore, reconcile, unwrap } from 'solid-js/store';
import type { Account, CreditTransfer } from '../../../contract/accounts/schemas';
import { api, describeError } from '../api';
import { useSignedIn } from '../ui/signed-in';
import { Async, latest } from '../ui/Async';
import { KeyShownOnce } from '../ui/KeyShownOnce';
import { Field } from '../ui/Field';
import { KeyValueRows } from '../ui/KeyValueRows';
import { Notice, type NoticeState } from '../ui/Notice';
import { formatMoney } from '../ui/format';
import { t } from '../i18n';
import { ACL_FIELDS, LIMIT_FIELDS, accountCreate, accountPatch, blankForm, formOf, formProblems, isMoneyLimit, treeRows, type AccountForm } from './account-form';
import { AccountSummary, CreditLine, type Outcome, type Parent } from './AccountSummary';
import { AclEditor } from './AclEditor';

export function AccountsTab() {
  const signed = useSignedIn();
  // Inside the console the signed-in account is already known; asked for only outside it.
  const [fetched] = createResource(() => !signed, () => api.dashboard.info.query());
  const me = () => signed?.info ?? latest(fetched);
  const [list, { refetch }] = createResource(() => api.accounts.descendants.query({ order: 'dna', size: 1000 }));
  const [query, setQuery] = createSignal('');
  const [selected, setSelected] = createSignal<number | null>(null);
  const [creating, setCreating] = createSignal(false);
  const [newKey, setNewKey] = createSignal<{ name: string; key: string } | null>(null);
  const [notice, setNotice] = createSignal<(Outcome & { kind: NoticeState['kind'] }) | null>(null);
  // Built here, under the component, so the credit line's JSX has an owner (actions finish in async code).
  const shownNotice = createMemo((): NoticeState | null => {
    const n = notice();
    return n && { kind: n.kind, text: <>{n.text}{n.credit && <CreditLine {...n.credit} />}</> };
  });
  let noticeBox!: HTMLDivElement;
  let newButton!: HTMLButtonElement;

  const rows = createMemo(() => treeRows(latest(list) ?? [], me()?.dna ?? '.', query()));
  const current = createMemo(() => (latest(list) ?? []).find((a) => a.ID === selected()) ?? null);
  const isRoot = () => me()?.role === 'root';
  // Level, Role, Factor, LevelMapper, Gear and Tier are an Owner's to set; a reseller edits the rest.
  const isOwner = () => me()?.is_owner ?? false;
  const parentOf = (a: Account): Parent | null => {
    const m = me();
    if (m && a.ParentID === m.id) return { name: m.name, role: m.role, rates: m.rates, caller: true };
    const p = (latest(list) ?? []).find((x) => x.ID === a.ParentID);
    return p ? { name: p.Name, role: p.Role, rates: p.Rates, caller: false } : null;
  };
  /** Where focus goes when what held it is gone: the account's tree item, else the New button. */
  const focusTree = (id: number | null) => {
    const item = id === null ? null : document.querySelector<HTMLElement>(`[data-account-id="${id}"]`);
    (item ?? newButton).focus();
  };

  // After an action the notice says what happened, and focus moves to it rather than to <body>.
  const done = async (outcome: Outcome, keep: number | null) => {
    setNotice({ kind: 'success', ...outcome });
    // A deleted account's pages close before the list drops it, so nothing reads it once gone.
    if (keep === null) setSelected(null);
    await refetch();
    setSelected(keep);
    noticeBox.focus();
  };

  return (
    <div class="stack">
      <div class="page-head page-head-row">
        <div class="page-title">
          <h1>{t('accounts.title')}</h1>
          <p class="muted">{t('accounts.intro')}</p>
        </div>
        <button type="button" class="btn btn-primary" ref={newButton} onClick={() => { setCreating(true); setSelected(null); setNewKey(null); }}>{t('accounts.newSubaccount')}</button>
      </div>
      <div tabIndex={-1} ref={noticeBox} data-testid="accounts-notice">
        <Notice notice={shownNotice()} onClose={() => { setNotice(null); focusTree(selected()); }} />
      </div>
      <Show when={newKey()}>
        {(k) => (
          <KeyShownOnce title={t('accounts.keyOf', { name: k().name })} apiKey={k().key}>{t('accounts.storeKey')}</KeyShownOnce>
        )}
      </Show>
      <Show when={creating()}>
        <AccountEditor account={null} ownerFields={isOwner()} rootCaller={isRoot()} onCancel={() => { setCreating(false); newButton.focus(); }}
          onCreated={async (a, key, requested, transfer) => {
            setCreating(false);
            setNewKey({ name: a.Name, key });
            const text = t('accounts.created', { name: a.Name, id: String(a.ID) });
            await done(transfer ? { text: `${text} ${t('subaccounts.createdCredit')}`, credit: { requested, transfer } } : { text }, a.ID);
          }} onSaved={() => {}} onDeleted={() => {}} />
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
                        <button type="button" class="tree-item" data-account-id={r.account.ID} classList={{ 'tree-item-active': selected() === r.account.ID, 'tree-match': r.match }}
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
        {/* Keyed: the pages start afresh from what is stored after every change, and never read an account the list dropped. */}
        <Show when={current()} keyed fallback={<section class="card"><p class="muted">{t('accounts.selectHint')}</p></section>}>
          {(a) => (
            <div class="stack">
              <AccountSummary account={a} parent={parentOf(a)} onChanged={(r) => done(r, a.ID)} onDeleted={(r) => done(r, null)} />
              <AccountEditor account={a} ownerFields={isOwner()} rootCaller={isRoot()} onCancel={() => { setSelected(null); focusTree(a.ID); }} onCreated={() => {}}
                onSaved={(text) => done({ text }, a.ID)} onDeleted={(text) => done({ text }, null)} />
            </div>
          )}
        </Show>
      </div>
    </div>
  );
}

/** Create (account null) or edit every field group the caller may set; only changed fields are sent. */
function AccountEditor(props: {
  account: Account | null; ownerFields: boolean; rootCaller: boolean;
  onCancel: () => void; onCreated: (a: Account, key: string, requested: number, transfer: CreditTransfer | null) => void; onSaved: (text: string) => void; onDeleted: (text: string) => void;
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
        const body = accountCreate(f, credit(), days(), props.ownerFields);
        const r = await api.accounts.create.mutate(body);
        props.onCreated(r.User, r.User.SecretKey, body.CreditGranted, r.Transfer);
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
      {/* Rates is any manager's to set (at least its own); the rest of routing and billing is an Owner's. */}
      <Show when={!props.ownerFields}>
        <fieldset class="subform grid-2">
          <legend>{t('subaccounts.pricing')}</legend>
          {numberField('Rates', 'Rates', t('accounts.editor.ratesHint'))}
        </fieldset>
      </Show>
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
