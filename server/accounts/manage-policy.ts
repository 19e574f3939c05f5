import type { Db } from '../storage/database';
import { balanceOf } from '../credits/ledger';
import type { ManagePolicy } from '../auth/authorizer';
import type { AccountRow } from '../auth/account-cache';

/**
 * Manage permission: Root and Owners always (unless suspended), since they fund everything
 * below them; any other account when not suspended and holding at least UserApiBalance.
 */
export class BalanceManagePolicy implements ManagePolicy {
  constructor(private readonly db: Db, private readonly userApiBalance: number) {}

  async check(a: AccountRow) {
    if (a.suspended) return { allowed: false, reason: 'This account is suspended' };
    if (a.role === 'root' || a.role === 'owner') return { allowed: true };
    const balance = await balanceOf(this.db, a.id);
    if (balance < this.userApiBalance) {
      return { allowed: false, reason: `Manage permission needs a balance of at least ${this.userApiBalance} (this account has ${balance.toFixed(2)})` };
    }
    return { allowed: true };
  }
}
