import { eq } from 'drizzle-orm';
import type { SelfRotate, SelfRotateResult, UserStatus } from '../../../contract/accounts/schemas';
import type { Actor } from '../../../contract/services';
import { ApiError, badRequest, conflict } from '../../../contract/errors';
import { accountKeys, accounts } from '../../adapters/storage/schema';
import { generateAccountKey, hashKey, hint, KEY_PATTERN } from '../../adapters/security/crypto';
import { recordOperation } from '../../state/oplog/oplog';
import { spendableOf } from '../../state/credits/ledger';
import type { AccountDeps } from './deps';
import { rethrowUnique } from './unique';
import { roundCredit } from './view';

/** The confirmation `/x-self` wants: today's UTC date, so a replayed or scripted call by mistake fails. */
export const rotateConfirmation = (now = new Date()) => `${now.toISOString().slice(0, 10)}-ROTATE-SELF`;

/**
 * POST /x-self: replaces the caller's key. A supplied key of the right form is used unless it
 * is the current one (a rotation must change the key); otherwise a key is generated. The old
 * key stops working at once: its rows go in the same transaction and the cache is dropped
 * right after the commit, here and (through the change feed) on every other instance.
 */
export async function rotateSelf(d: AccountDeps, actor: Actor, input: SelfRotate): Promise<SelfRotateResult> {
  const { caller } = actor;
  const expected = rotateConfirmation();
  if (input.confirm !== expected) throw badRequest(`confirm: must be "${expected}" (the current UTC date followed by -ROTATE-SELF)`, 'confirmation_mismatch');
  const supplied = input.key !== undefined && KEY_PATTERN.test(input.key);
  let key = supplied ? input.key! : generateAccountKey();
  const at = new Date();
  await d.db.transaction(async (tx) => {
    const [holder] = await tx.select({ accountId: accountKeys.accountId }).from(accountKeys).where(eq(accountKeys.keyHash, hashKey(key)));
    if (holder && holder.accountId !== caller.id) throw conflict('That key is already in use; send another or none', 'key_in_use');
    if (holder) key = generateAccountKey();
    await tx.delete(accountKeys).where(eq(accountKeys.accountId, caller.id));
    await tx.insert(accountKeys).values({ accountId: caller.id, keyHash: hashKey(key), hint: hint(key) });
    await recordOperation(tx, actor, { action: 'rotate_self', targetId: caller.id, details: { key_hint: hint(key), supplied: supplied && !holder } });
    await d.changes.announce(tx, [{ k: 'account', id: caller.id }]);
  }).catch(rethrowUnique({}));
  await d.changes.apply([{ k: 'account', id: caller.id }]);
  return {
    success: true,
    message: 'Self key rotated successfully',
    rotate: { action: 'rotate_self', id: caller.id, name: caller.name, key, timestamp: at.toISOString() },
  };
}

/** GET /dashboard/status: who the caller is and whether it may manage (the policy the endpoints enforce). */
export async function accountStatus(d: AccountDeps, { caller }: Actor): Promise<UserStatus> {
  const [row] = await d.db.select().from(accounts).where(eq(accounts.id, caller.id));
  if (!row) throw new ApiError(401, 'This account no longer exists', 'invalid_api_key');
  const balance = await spendableOf(d.db, row.id);
  const verdict = await d.policy.check(row);
  return {
    object: 'user_status',
    id: row.id,
    dna: row.dna,
    name: row.name,
    email: row.email,
    alias: row.alias,
    manage: verdict.allowed,
    admin: row.role === 'root' || row.role === 'owner',
    balance: roundCredit(balance - d.pendingCredit(row.id)),
    user_api_balance: d.userApiBalance,
    user_min_balance: d.userMinBalance,
    suspended: row.suspended,
  };
}
