import { and, count, eq, not, or } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import type { AccountPatch, AccountResult, CreditTransfer } from '../../../contract/accounts/schemas';
import type { Actor, Caller } from '../../../contract/services';
import { ApiError, badRequest, conflict, forbidden } from '../../../contract/errors';
import type { Tx } from '../../adapters/storage/database';
import { accounts, ownerConfigs, providerKeys } from '../../adapters/storage/schema';
import type { AccountRow } from '../../state/accounts/account-cache';
import { rescaleGrants } from '../../state/credits/ledger';
import { recordOperation } from '../../state/oplog/oplog';
import { inSubtree } from '../billing/subtree';
import { DEFAULT_CREDIT_DAYS, type AccountDeps } from './deps';
import { assertOwnerOnly, assertSelfUpdate, columnValues } from './fields';
import { findAccount, parseSingleIdentifier } from './identifiers';
import { assertAvailable, rethrowUnique } from './unique';
import { autoQuotaAfterGrant, grant, takeBack } from './transfer';
import { accountViews, roundCredit } from './view';
import type { Change } from '../../state/changes/change';

/**
 * A change of Role moves a subtree between tenants: only Root does it, only for its direct
 * children, and an Owner is demoted only once it holds no provider keys or configuration.
 * Returns the subtree's new tenant, or null when the Role does not change.
 */
async function roleChange(tx: Tx, d: AccountDeps, caller: Caller, target: AccountRow, role: 'user' | 'owner'): Promise<number | null> {
  if (role === target.role) return null;
  if (role === 'owner') {
    if (d.tenancy !== 'multi') throw badRequest('Role: "owner" needs TENANCY=multi; with a single tenant Root is the one Owner', 'single_tenancy');
    if (!caller.isRoot) throw forbidden('Only Root may make an account an Owner');
    if (target.parentId !== caller.id) throw badRequest('Role: Owners are direct children of Root', 'owner_not_root_child');
    await assertMovable(tx, target, target.id);
    return target.id;
  }
  if (!caller.isRoot) throw forbidden('Only Root may demote an Owner');
  const [{ keys }] = await tx.select({ keys: count() }).from(providerKeys).where(eq(providerKeys.ownerId, target.id));
  const [{ configs }] = await tx.select({ configs: count() }).from(ownerConfigs).where(eq(ownerConfigs.ownerId, target.id));
  if (keys > 0 || configs > 0) {
    throw conflict(`Owner #${target.id} still has ${keys} provider keys and ${configs} configuration keys; remove them before demoting it`, 'owner_has_configuration');
  }
  await assertMovable(tx, target, caller.ownerId);
  return caller.ownerId;
}

/**
 * Names and emails are unique per tenant: a subtree moving into `tenant` must not bring one its
 * accounts already use. Only Root moves subtrees, and it sees every tenant, so the 409 names both.
 */
async function assertMovable(tx: Tx, target: AccountRow, tenant: number): Promise<void> {
  const there = alias(accounts, 'there');
  const [clash] = await tx.select({ id: accounts.id, name: accounts.name, email: accounts.email, otherId: there.id, otherName: there.name })
    .from(accounts)
    .innerJoin(there, and(eq(there.ownerId, tenant), or(eq(there.name, accounts.name), eq(there.email, accounts.email)), not(inSubtree(there.dna, target.dna))))
    .where(inSubtree(accounts.dna, target.dna))
    .limit(1);
  if (!clash) return;
  const field = clash.name === clash.otherName ? 'Name' : 'Email';
  throw conflict(
    `${field} "${field === 'Name' ? clash.name : clash.email}" of account #${clash.id} is already taken in tenant #${tenant} (account #${clash.otherId}); rename one of them first`,
    field === 'Name' ? 'duplicate_name' : 'duplicate_email',
  );
}

/** PUT/POST /x-users/{identifier}: any descendant, or the caller's own profile. */
export async function updateAccount(d: AccountDeps, actor: Actor, identifier: string, patch: AccountPatch): Promise<AccountResult> {
  const { caller } = actor;
  const sent = Object.keys(patch).filter((k) => (patch as Record<string, unknown>)[k] !== undefined);
  if (sent.length === 0) throw badRequest('Nothing to update: send at least one field of the subaccount table');
  const ident = parseSingleIdentifier(identifier);
  assertOwnerOnly(caller, patch);
  const amount = patch.CreditGranted === undefined ? 0 : roundCredit(patch.CreditGranted);
  if (patch.Days !== undefined && !(amount > 0)) throw badRequest('Days: applies to a positive CreditGranted (the validity of the new card)');
  const email = patch.Email?.toLowerCase();

  let changes: Change[] = [];
  const { row, transfer } = await d.db.transaction(async (tx) => {
    const target = await findAccount(tx, caller, ident, { lock: true });
    const self = target.id === caller.id;
    if (self) assertSelfUpdate(caller, patch);
    const [parent] = target.parentId === null ? [null] : await tx.select().from(accounts).where(eq(accounts.id, target.parentId));
    const [payer] = target.id === caller.id ? [target] : await tx.select().from(accounts).where(eq(accounts.id, caller.id));
    if (!payer) throw new ApiError(401, 'This account no longer exists', 'invalid_api_key');

    const newTenant = patch.Role === undefined ? null : await roleChange(tx, d, caller, target, patch.Role);
    const role = patch.Role ?? target.role;
    // Tenants and Root are bounded by nobody; everyone else by the parent.
    const bound = role === 'user' && parent ? parent : null;
    const values = columnValues(patch, target, bound, 'update');
    // AutoQuota: a grant raises HardLimit by the amount and puts SoftLimit at 80% of it.
    if (amount > 0 && (values.autoQuota ?? target.autoQuota)) {
      Object.assign(values, autoQuotaAfterGrant(values.hardLimit !== undefined ? values.hardLimit : target.hardLimit, amount));
    }
    if (patch.Name !== undefined && patch.Name !== target.name) values.name = patch.Name;
    if (email !== undefined && email !== target.email) values.email = email;
    await assertAvailable(tx, newTenant ?? target.ownerId, { name: values.name, email: values.email }, target.id);

    if (values.rates !== undefined && values.rates !== target.rates) await rescaleGrants(tx, target.id, values.rates / target.rates);
    const priced = { ...target, rates: values.rates ?? target.rates };
    let transfer: CreditTransfer | null = null;
    if (amount > 0) transfer = await grant(tx, d, payer, priced, amount, patch.Days ?? DEFAULT_CREDIT_DAYS);
    else if (amount < 0) transfer = await takeBack(tx, d, priced, parent ?? null, -amount);

    if (newTenant !== null) {
      values.role = patch.Role;
      await tx.update(accounts).set({ ownerId: newTenant }).where(inSubtree(accounts.dna, target.dna));
    }
    const [row] = await tx.update(accounts).set({ ...values, updatedAt: new Date() }).where(eq(accounts.id, target.id)).returning();
    await recordOperation(tx, actor, {
      action: self ? 'update_self' : 'update_user',
      targetId: target.id,
      details: {
        fields: sent,
        ...(values.name ? { name: values.name } : {}),
        ...(values.email ? { email: values.email } : {}),
        ...(values.status !== undefined ? { status: values.status } : {}),
        ...(values.suspended !== undefined ? { suspended: values.suspended } : {}),
        ...(values.rates !== undefined ? { rates: values.rates } : {}),
        ...(newTenant !== null ? { role: patch.Role, owner_id: newTenant } : {}),
        ...(transfer ? { credit: transfer } : {}),
      },
    });
    // A subtree that changed tenant is many accounts: every instance drops them all.
    changes = newTenant !== null ? [{ k: 'accounts' }] : [{ k: 'account', id: target.id }];
    for (const t of [transfer?.FromID, transfer?.ToID]) if (t) changes.push({ k: 'credit', id: t });
    await d.changes.announce(tx, changes);
    return { row, transfer };
  }).catch(rethrowUnique({ name: patch.Name, email }));

  // After commit, so no request can cache the old row again.
  await d.changes.apply(changes);
  const [view] = await accountViews(d.db, [row], d.pendingCredit);
  return { Action: 'update', User: view, Transfer: transfer };
}
