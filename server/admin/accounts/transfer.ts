import type { CreditTransfer } from '../../../contract/accounts/schemas';
import { ApiError } from '../../../contract/errors';
import type { Tx } from '../../adapters/storage/database';
import type { AccountRow } from '../../state/accounts/account-cache';
import { activeGrants, balanceOf, grantCredit, takeCredit } from '../../state/credits/ledger';
import { DEFAULT_CREDIT_DAYS, type AccountDeps } from './deps';
import { convertCredit as convert, isFunded, refundedCredit, roundCredit } from '../../../contract/accounts/credit';

type Party = Pick<AccountRow, 'id' | 'name' | 'role' | 'rates'>;

/**
 * Takes exactly `amount` from the account's cards (locked, earliest expiry first), leaving at
 * least the usage the proxy recorded but has not yet deducted; otherwise a 402 that rolls the
 * whole request back.
 */
async function debitExactly(tx: Tx, d: AccountDeps, account: Party, amount: number, refusal: (available: number) => ApiError): Promise<void> {
  const taken = await takeCredit(tx, account.id, amount);
  const left = await balanceOf(tx, account.id);
  const pending = d.pendingCredit(account.id);
  if (taken + 1e-9 < amount || left + 1e-9 < pending) {
    throw refusal(roundCredit(Math.max(taken + left - pending, 0)));
  }
}

/**
 * A grant of `amount` to `target`, paid by `payer` (the caller) at the reference's rate:
 * amount / target Rates × payer Rates. Root and Owners pay nothing.
 */
export async function grant(tx: Tx, d: AccountDeps, payer: Party, target: Party, amount: number, days: number): Promise<CreditTransfer> {
  let debited = 0;
  if (isFunded(payer)) {
    debited = convert(amount, target, payer);
    if (debited > 0) {
      await debitExactly(tx, d, payer, debited, (available) => new ApiError(402,
        `Insufficient balance: granting ${amount} costs you ${debited} (at Rates ${target.rates} vs your ${payer.rates}); you have ${available}`,
        'insufficient_balance'));
    }
  }
  await grantCredit(tx, target.id, amount, days, `granted by ${payer.name} (#${payer.id})`);
  return { Kind: 'grant', FromID: isFunded(payer) ? payer.id : null, ToID: target.id, Debited: debited, Credited: amount };
}

/** A SoftLimit at this share of the HardLimit, as the reference fills them from CreditGranted. */
export const AUTO_SOFT_SHARE = 0.8;

/**
 * AutoQuota: a grant of `amount` raises the HardLimit (monthly spend cap) by the amount and sets
 * the SoftLimit (monthly alert) to 80% of the new HardLimit, so the caps follow the credit
 * given. `hard` is the HardLimit the grant raises (null: none yet, i.e. 0).
 */
export function autoQuotaAfterGrant(hard: number | null | undefined, amount: number): { hardLimit: number; softLimit: number } {
  const hardLimit = roundCredit(Math.max(hard ?? 0, 0) + amount);
  return { hardLimit, softLimit: roundCredit(hardLimit * AUTO_SOFT_SHARE) };
}

/** Credit back to a funded parent on a new card, converted to the parent's Rates. */
async function refundTo(tx: Tx, parent: Party | null, from: Party, amount: number, why: string): Promise<{ toId: number | null; credited: number }> {
  if (!parent || !isFunded(parent) || amount <= 0) return { toId: null, credited: 0 };
  const credited = refundedCredit(amount, from, parent);
  await grantCredit(tx, parent.id, credited, DEFAULT_CREDIT_DAYS, `${why} ${from.name} (#${from.id})`);
  return { toId: parent.id, credited };
}

/** Negative CreditGranted: `amount` leaves the target and goes back to its funded parent. */
export async function takeBack(tx: Tx, d: AccountDeps, target: Party, parent: Party | null, amount: number): Promise<CreditTransfer> {
  await debitExactly(tx, d, target, amount, (available) => new ApiError(402,
    `Cannot take back ${amount}: account #${target.id} has ${available} that is not already spent`, 'insufficient_credit'));
  const { toId, credited } = await refundTo(tx, parent, target, amount, 'taken back from');
  return { Kind: 'take_back', FromID: target.id, ToID: toId, Debited: amount, Credited: credited };
}

/**
 * A deleted account's remaining credit (less usage still to be deducted) goes back to its
 * funded parent; credit that came from Root or an Owner returns to them, i.e. is retired.
 * Returns the cards as they were, for the answer.
 */
export async function refundRemaining(tx: Tx, d: AccountDeps, target: Party, parent: Party | null) {
  const cards = await activeGrants(tx, target.id);
  const taken = await takeCredit(tx, target.id, Number.MAX_SAFE_INTEGER);
  const remaining = roundCredit(Math.max(taken - d.pendingCredit(target.id), 0));
  if (remaining <= 0) return { cards, transfer: null };
  const { toId, credited } = await refundTo(tx, parent, target, remaining, 'refund from deleted account');
  const transfer: CreditTransfer = { Kind: 'refund', FromID: target.id, ToID: toId, Debited: remaining, Credited: credited };
  return { cards, transfer };
}
