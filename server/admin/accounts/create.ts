import { count, eq } from 'drizzle-orm';
import type { AccountAddResult, AccountCreate } from '../../../contract/accounts/schemas';
import type { Actor } from '../../../contract/services';
import { ApiError, badRequest, forbidden } from '../../../contract/errors';
import { accountKeys, accounts } from '../../adapters/storage/schema';
import { generateAccountKey, hashKey, hint } from '../../adapters/security/crypto';
import { recordOperation } from '../../state/oplog/oplog';
import { DEFAULT_CREDIT_DAYS, nextAccountId, type AccountDeps } from './deps';
import { assertOwnerOnly, columnValues, inheritedFrom } from './fields';
import { assertAvailable, rethrowUnique } from './unique';
import { autoQuotaAfterGrant, grant } from './transfer';
import { accountViews, roundCredit } from './view';

/**
 * POST /x-users: a direct child of the caller, with its own key (answered once), its DNA path,
 * what it inherits from the caller, and a first card paid by the caller unless the caller is
 * Root or an Owner.
 */
export async function createAccount(d: AccountDeps, actor: Actor, input: AccountCreate): Promise<AccountAddResult> {
  const { caller } = actor;
  assertOwnerOnly(caller, input);
  const role = input.Role ?? 'user';
  if (role === 'owner') {
    if (d.tenancy !== 'multi') throw badRequest('Role: "owner" needs TENANCY=multi; with a single tenant Root is the one Owner', 'single_tenancy');
    if (!caller.isRoot) throw forbidden('Only Root may create Owner accounts');
  }
  const name = input.Name;
  const email = input.Email.toLowerCase();
  const requested = roundCredit(input.CreditGranted);
  // A user account below UserMinBalance could not make one call: it is raised to the minimum (the
  // spec's "adjusted by backend minimum rules"); an Owner is never charged and needs none. A
  // parent short of the amount is refused, never granted less than asked (decisions.md).
  const amount = role === 'user' && requested < d.userMinBalance ? roundCredit(d.userMinBalance) : requested;
  // A new account joins the caller's tenant; a new Owner starts a tenant of its own, empty so far.
  if (role === 'user') await assertAvailable(d.db, caller.ownerId, { name, email });

  const key = generateAccountKey();
  const { row, transfer } = await d.db.transaction(async (tx) => {
    // Locking the parent serializes its creations: UserLimit counts and its balance stay exact.
    const [parent] = await tx.select().from(accounts).where(eq(accounts.id, caller.id)).for('update');
    if (!parent) throw new ApiError(401, 'This account no longer exists', 'invalid_api_key');
    if (parent.userLimit !== null) {
      const [{ n }] = await tx.select({ n: count() }).from(accounts).where(eq(accounts.parentId, parent.id));
      if (n >= parent.userLimit) throw forbidden(`UserLimit reached: this account may have at most ${parent.userLimit} subaccounts`);
    }
    // A new tenant starts from the defaults: Root's routing and ACL are Root's own business.
    const base = role === 'owner' ? {} : inheritedFrom(parent);
    const values = { ...base, ...columnValues(input, base, role === 'owner' ? null : parent, 'create') };
    // AutoQuota: the caps follow the credit granted (an inherited HardLimit is not the account's quota).
    if (values.autoQuota && amount > 0) Object.assign(values, autoQuotaAfterGrant(input.HardLimit ?? null, amount));
    const id = await nextAccountId(tx);
    const [row] = await tx.insert(accounts).values({
      ...values,
      id,
      parentId: parent.id,
      ownerId: role === 'owner' ? id : parent.ownerId,
      dna: `${parent.dna}${id}.`,
      depth: parent.depth + 1,
      name,
      email,
      alias: values.alias ?? name,
      role,
    }).returning();
    await tx.insert(accountKeys).values({ accountId: id, keyHash: hashKey(key), hint: hint(key) });
    const transfer = amount > 0 ? await grant(tx, d, parent, row, amount, input.Days ?? DEFAULT_CREDIT_DAYS) : null;
    if (transfer && amount !== requested) transfer.Requested = requested;
    await recordOperation(tx, actor, {
      action: 'add_user',
      targetId: id,
      details: { name, email, dna: row.dna, role, credit_granted: amount, ...(amount !== requested ? { credit_requested: requested } : {}), days: input.Days ?? DEFAULT_CREDIT_DAYS, parent_debited: transfer?.Debited ?? 0 },
    });
    await d.changes.announce(tx, [{ k: 'credit', id: caller.id }]);
    return { row, transfer };
  }).catch(rethrowUnique({ name, email }));

  // The parent's balance changed: the proxy's in-memory copy must be re-read, on every instance.
  await d.changes.apply([{ k: 'credit', id: caller.id }]);
  const [view] = await accountViews(d.db, [row], d.pendingCredit);
  return { Action: 'add', User: { ...view, SecretKey: key }, Transfer: transfer };
}
