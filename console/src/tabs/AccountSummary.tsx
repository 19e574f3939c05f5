import { createSignal, For, Show } from 'solid-js';
import type { Account, CreditTransfer } from '../../../contract/accounts/schemas';
import { refundedCredit } from '../../../contract/accounts/credit';
import { api, describeError } from '../api';
import { Field } from '../ui/Field';
import { formatInt, formatMoney, formatTime } from '../ui/format';
import { t, tn } from '../i18n';

/** The parent a deleted account's credit would go back to, as the refund rule needs it. */
export interface Parent { name: string; role: Account['Role']; rates: number; caller: boolean }

/** What an action did, for the notice: its text and, for a grant, the credit asked for and moved. */
export interface Outcome { text: string; credit?: { requested: number; transfer: CreditTransfer } }

/** "Requested $5.00 · Credited $5.00 · You paid $5.00": what was asked beside what the server granted. */
export function CreditLine(props: { requested: number; transfer: CreditTransfer }) {
  const requested = () => props.requested;
  const transfer = () => props.transfer;
  return (
    <span data-testid="credit-line">
      {' '}<span data-testid="credit-requested">{t('subaccounts.requested', { amount: formatMoney(transfer().Requested ?? requested()) })}</span>
      {' · '}<span data-testid="credit-credited">{t('subaccounts.credited', { amount: formatMoney(transfer().Credited) })}</span>
      <Show when={transfer().Requested !== undefined}> ({t('subaccounts.raised')})</Show>
      <Show when={transfer().Debited > 0}>{' · '}<span data-testid="credit-paid">{t('subaccounts.paid', { amount: formatMoney(transfer().Debited) })}</span></Show>
    </span>
  );
}

/** Balance and cards, and the actions that act at once: grant credit, suspend, delete. */
export function AccountSummary(props: { account: Account; parent: Parent | null; onChanged: (r: Outcome) => void; onDeleted: (r: Outcome) => void }) {
  const [amount, setAmount] = createSignal('');
  const [days, setDays] = createSignal('');
  const [busy, setBusy] = createSignal(false);
  const [error, setError] = createSignal<string | null>(null);
  const [confirmDelete, setConfirmDelete] = createSignal(false);
  let deleteButton!: HTMLButtonElement;
  let keepButton!: HTMLButtonElement;
  const a = () => props.account;
  const id = () => String(a().ID);
  // What the delete will refund, by the server's own rule: the credit left (cards less usage still
  // to be deducted; a grant pays any overdraft first, so the two never stand together), converted
  // to a funded parent's Rates; nothing when the parent is Root or an Owner.
  const remaining = () => Math.max(a().Balance, 0);
  const refund = () => refundedCredit(remaining(), { rates: a().Rates }, props.parent);
  const refundText = () => {
    const p = props.parent;
    if (remaining() <= 0 || !p) return t('subaccounts.refundNothing', { name: a().Name });
    if (p.role !== 'user') return t('subaccounts.refundRetired', { name: a().Name, amount: formatMoney(remaining()) });
    return p.caller
      ? t('subaccounts.refundToYou', { name: a().Name, amount: formatMoney(refund()) })
      : t('subaccounts.refundToParent', { name: a().Name, amount: formatMoney(refund()), parent: p.name });
  };
  const deletedText = (transfer: CreditTransfer | null) => {
    if (!transfer?.ToID || transfer.Credited <= 0) return t('accounts.summary.deleted', { name: a().Name });
    return props.parent?.caller
      ? t('subaccounts.deletedToYou', { name: a().Name, amount: formatMoney(transfer.Credited) })
      : t('subaccounts.deletedToParent', { name: a().Name, amount: formatMoney(transfer.Credited), id: String(transfer.ToID) });
  };
  const openConfirm = () => {
    setConfirmDelete(true);
    keepButton.focus();
  };
  const closeConfirm = () => {
    setConfirmDelete(false);
    deleteButton.focus();
  };
  const run = async (fn: () => Promise<string | Outcome>, after: (r: Outcome) => void) => {
    setBusy(true);
    setError(null);
    try {
      const r = await fn();
      after(typeof r === 'string' ? { text: r } : r);
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
      const r = await api.accounts.update.mutate({ identifier: id(), CreditGranted: n, ...(days().trim() ? { Days: Number(days()) } : {}) });
      setAmount('');
      setDays('');
      if (n < 0) return t('accounts.summary.tookBack', { amount: formatMoney(-n), name: a().Name });
      const text = t('subaccounts.toppedUp', { name: a().Name });
      return r.Transfer ? { text, credit: { requested: n, transfer: r.Transfer } } : text;
    }, props.onChanged);
  };
  return (
    <section class="card" data-testid="account-summary">
      <div class="card-head">
        <div class="card-title"><h2>{a().Alias || a().Name} <span class="muted small">{t('common.idRef', { id: String(a().ID) })}</span></h2>
          <p class="muted small">{a().Email} · {t('accounts.summary.dna')} <code>{a().DNA}</code> · {t('accounts.summary.key', { hint: a().KeyHint })} · {tn('accounts.summary.children', a().Children, { n: formatInt(a().Children) })}</p></div>
        <div class="row-actions">
          <button type="button" class="btn btn-small" disabled={busy()}
            onClick={() => run(async () => { await api.accounts.update.mutate({ identifier: id(), Status: !a().Status }); return t(a().Status ? 'subaccounts.disabledDone' : 'subaccounts.enabledDone', { name: a().Name }); }, props.onChanged)}>
            {a().Status ? t('subaccounts.disable') : t('subaccounts.enable')}
          </button>
          <button type="button" class="btn btn-small" disabled={busy()}
            onClick={() => run(async () => { await api.accounts.update.mutate({ identifier: id(), Suspended: !a().Suspended }); return t(a().Suspended ? 'accounts.summary.resumed' : 'accounts.summary.suspended', { name: a().Name }); }, props.onChanged)}>
            {a().Suspended ? t('accounts.summary.resume') : t('accounts.summary.suspend')}
          </button>
          <button type="button" class="btn btn-small btn-ghost-danger" ref={deleteButton} disabled={busy()} aria-expanded={confirmDelete()} onClick={openConfirm}>{t('common.delete')}</button>
        </div>
      </div>
      <Show when={confirmDelete()}>
        <div class="notice notice-error confirm-delete" role="alert" data-testid="confirm-delete" onKeyDown={(e) => { if (e.key === 'Escape') closeConfirm(); }}>
          <span>{t('subaccounts.confirmDelete', { name: a().Name })} <strong data-testid="refund-preview">{refundText()}</strong></span>
          <button type="button" class="btn btn-small btn-danger" disabled={busy()}
            onClick={() => run(async () => { const r = await api.accounts.remove.mutate({ identifier: id() }); return deletedText(r.Transfer); }, props.onDeleted)}>{t('accounts.summary.deleteForGood')}</button>
          <button type="button" class="btn btn-small" ref={keepButton} onClick={closeConfirm}>{t('accounts.summary.keep')}</button>
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
