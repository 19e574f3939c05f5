import type { AccountService, AccountPaging, AccountScope } from '../../../contract/accounts/service';
import type { AccountCreate, AccountListQuery, AccountPatch, SelfRotate } from '../../../contract/accounts/schemas';
import type { Actor } from '../../../contract/services';
import type { AccountDeps } from './deps';
import { createAccount } from './create';
import { updateAccount } from './update';
import { deleteAccount } from './delete';
import { listAccounts, selectAccounts } from './list';
import { accountStatus, rotateSelf } from './self';

/** The account hierarchy: each operation lives in its own module; this only binds them to the gateway. */
export class Accounts implements AccountService {
  constructor(private readonly d: AccountDeps) {}

  create(actor: Actor, input: AccountCreate) { return createAccount(this.d, actor, input); }
  list(actor: Actor, scope: AccountScope, query: AccountListQuery) { return listAccounts(this.d, actor, scope, query); }
  select(actor: Actor, scope: AccountScope, identifier: string, paging: AccountPaging) { return selectAccounts(this.d, actor, scope, identifier, paging); }
  update(actor: Actor, identifier: string, patch: AccountPatch) { return updateAccount(this.d, actor, identifier, patch); }
  remove(actor: Actor, identifier: string) { return deleteAccount(this.d, actor, identifier); }
  rotateSelf(actor: Actor, input: SelfRotate) { return rotateSelf(this.d, actor, input); }
  status(actor: Actor) { return accountStatus(this.d, actor); }
}
