import type { Db } from '../../adapters/storage/database';
import { spendableOf } from '../../state/credits/ledger';
import type { ManagePolicy } from '../auth/authorizer';
import type { AccountRow } from '../../state/accounts/account-cache';

/**
 * Manage permission: Root and Owners always (unless suspended), since they fund everything
 * below them; any other account when not suspended and holding at least UserApiBalance,
 * counting usage the proxy recorded but has not yet deducted as spent.
 */
export class BalanceManagePolicy implements ManagePolicy {
  constructor(
    private readonly db: Db,
    private readonly userApiBalance: number,
    private readonly pendingCredit: (accountId: number) => number = () => 0,
  ) {}

  async check(a: AccountRow) {
    if (a.suspended) return { allowed: false, reason: 'This account is suspended' };
    if (a.role === 'root' || a.role === 'owner') return { allowed: true };
    const balance = (await spendableOf(this.db, a.id)) - this.pendingCredit(a.id);
    if (balance < this.userApiBalance) {
      return { allowed: false, reason: `Manage permission needs a balance of at least ${this.userApiBalance} (this account has ${Math.max(balance, 0).toFixed(2)})` };
    }
    return { allowed: true };
  }
}
