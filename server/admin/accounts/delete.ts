import { and, count, eq } from 'drizzle-orm';
import type { AccountResult } from '../../../contract/accounts/schemas';
import type { Actor } from '../../../contract/services';
import { conflict } from '../../../contract/errors';
import { accountKeys, accounts, news } from '../../adapters/storage/schema';
import { recordOperation } from '../../state/oplog/oplog';
import type { AccountDeps } from './deps';
import { findAccount, parseSingleIdentifier, refuseSelf } from './identifiers';
import { refundRemaining } from './transfer';
import { toAccount } from './view';
import type { Change } from '../../state/changes/change';

/**
 * DELETE /x-users/{identifier}: refused while the account has subaccounts (nothing is ever
 * deleted by surprise); its remaining credit goes back to a funded parent; its key, cards and
 * the news aimed at it go with it. Usage history stays for the bills.
 */
export async function deleteAccount(d: AccountDeps, actor: Actor, identifier: string): Promise<AccountResult> {
  const { caller } = actor;
  const ident = parseSingleIdentifier(identifier);
  let changes: Change[] = [];
  const { row, cards, transfer, hint } = await d.db.transaction(async (tx) => {
    const target = await findAccount(tx, caller, ident, { lock: true });
    refuseSelf(caller, target);
    // Creating a child locks its parent's row too, so no child can appear after this count.
    const [{ n }] = await tx.select({ n: count() }).from(accounts).where(eq(accounts.parentId, target.id));
    if (n > 0) throw conflict(`Account #${target.id} has ${n} subaccount${n === 1 ? '' : 's'}; delete or move them first`, 'has_children');
    const [parent] = target.parentId === null ? [null] : await tx.select().from(accounts).where(eq(accounts.id, target.parentId));
    const { cards, transfer } = await refundRemaining(tx, d, target, parent ?? null);
    const keyRows = await tx.select({ hint: accountKeys.hint }).from(accountKeys).where(eq(accountKeys.accountId, target.id));
    await tx.delete(news).where(and(eq(news.scope, 'user'), eq(news.targetId, target.id)));
    await tx.delete(news).where(and(eq(news.scope, 'dna'), eq(news.targetDna, target.dna)));
    await tx.delete(accounts).where(eq(accounts.id, target.id));
    await recordOperation(tx, actor, {
      action: 'delete_user',
      targetId: target.id,
      details: { name: target.name, email: target.email, dna: target.dna, role: target.role, ...(transfer ? { credit: transfer } : {}) },
    });
    // Its key stops working on every instance; a deleted Owner's tenant loses its keys and configuration.
    changes = [{ k: 'account', id: target.id }];
    if (transfer?.ToID) changes.push({ k: 'credit', id: transfer.ToID });
    if (target.role === 'owner') changes.push({ k: 'provider-keys', owner: target.id }, { k: 'owner-config', owner: target.id });
    await d.changes.announce(tx, changes);
    return { row: target, cards, transfer, hint: keyRows[0]?.hint ?? '' };
  });

  await d.changes.apply(changes);
  // The answer shows the cards as they were when the account was deleted.
  return { Action: 'delete', User: toAccount(row, { cards, pending: 0, children: 0, keyHint: hint }), Transfer: transfer };
}
