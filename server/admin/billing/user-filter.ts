import { and, eq, ne, sql, type SQL } from 'drizzle-orm';
import type { Caller } from '../../../contract/services';
import { ApiError, badRequest } from '../../../contract/errors';
import type { Db } from '../../adapters/storage/database';
import { accounts, usageDaily } from '../../adapters/storage/schema';
import { findAccount, parseIdentifier } from '../accounts/identifiers';
import { inSubtree } from './subtree';

/** Which of the caller's descendants a descendant bill covers. */
export type BillScope =
  | { kind: 'all' }
  | { kind: 'account'; id: number }
  | { kind: 'subtree'; dna: string }
  | { kind: 'attribute'; where: SQL };

/** The accounts area words its 400s for a path `identifier`; here the parameter is `user`. */
export function asUserParam<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof ApiError && err.status === 400) throw new ApiError(400, err.message.replace(/^identifier\b/, 'user'), err.apiCode);
    throw err;
  }
}

/**
 * `user`/`u` of `/x-bill`, in the accounts area's identifier forms: an ID, username or email
 * names one account; a DNA path that account and everything below it; `L{n}`/`G{n}`/`R{n}`/
 * `T{n}`/`F{n}` the descendants matching. Unknown or outside the caller's tree is answered as
 * `findAccount` says, and the caller itself 400: its own usage is never part of a descendant bill.
 */
export async function resolveBillUser(db: Db, caller: Caller, raw: string): Promise<BillScope> {
  const id = asUserParam(() => parseIdentifier(raw));
  if (id.kind === 'filter') return { kind: 'attribute', where: id.where };
  if (id.kind === 'dna' && id.dna === caller.dna) return { kind: 'all' };
  const row = await findAccount(db, caller, id, { param: 'user' });
  if (id.kind === 'dna') return { kind: 'subtree', dna: row.dna };
  if (row.id === caller.id) throw badRequest('user: your own usage is not part of /x-bill; see /dashboard/bill', 'own_account');
  return { kind: 'account', id: row.id };
}

/** usage_daily rows a descendant bill reads: always inside the caller's subtree, never the caller's own. */
export function scopeCondition(caller: Caller, scope: BillScope): SQL {
  const notSelf = ne(usageDaily.accountId, caller.id);
  switch (scope.kind) {
    case 'all': return and(inSubtree(usageDaily.dna, caller.dna), notSelf)!;
    case 'account': return eq(usageDaily.accountId, scope.id);
    case 'subtree': return and(inSubtree(usageDaily.dna, scope.dna), notSelf)!;
    case 'attribute': return and(
      inSubtree(usageDaily.dna, caller.dna),
      notSelf,
      sql`${usageDaily.accountId} in (select ${accounts.id} from ${accounts} where ${and(inSubtree(accounts.dna, caller.dna), ne(accounts.id, caller.id), scope.where)})`,
    )!;
  }
}
