/**
 * How credit moves between accounts, as pure arithmetic: the server moves it with these
 * (server/admin/accounts/transfer.ts) and the console previews a move with the same rule, so a
 * preview can never disagree with what the request then does.
 */

/** Credit is shown and moved in micro-USD, the resolution usage is billed in. */
export const roundCredit = (x: number) => Math.round(x * 1e6) / 1e6;

interface Priced { rates: number }
interface Party extends Priced { role: 'root' | 'owner' | 'user' }

/** Root and Owners are where credit comes from: they are never debited nor refunded. */
export const isFunded = (a: { role: Party['role'] }) => a.role === 'user';

/** Credit worth `amount` at `from`'s Rates, expressed at `to`'s Rates. */
export const convertCredit = (amount: number, from: Priced, to: Priced) => roundCredit((amount / from.rates) * to.rates);

/**
 * What credit worth `amount` leaving `from` (a take-back, or a deleted account's remaining
 * credit) puts on its parent's new card: converted to the parent's Rates when the parent is
 * funded; 0 when it is Root or an Owner, where the credit came from and is retired.
 */
export function refundedCredit(amount: number, from: Priced, parent: Party | null): number {
  if (!parent || !isFunded(parent) || amount <= 0) return 0;
  return convertCredit(amount, from, parent);
}
