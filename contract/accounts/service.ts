import type { Actor } from '../auth/caller';
import type { Page } from '../trpc';
import type {
  Account, AccountAddResult, AccountCreate, AccountListQuery, AccountOrder, AccountPatch, AccountResult, SelfRotate, SelfRotateResult, UserStatus,
} from './schemas';

/** `children`: `/x-users` (direct subaccounts); `descendants`: `/x-dna` (the whole subtree). */
export type AccountScope = 'children' | 'descendants';

export interface AccountPaging {
  page?: number;
  size?: number;
  order?: AccountOrder;
}

/** The account hierarchy below the caller: subaccounts, their credit, and the caller's own key. */
export interface AccountService {
  create(actor: Actor, input: AccountCreate): Promise<AccountAddResult>;
  list(actor: Actor, scope: AccountScope, query: AccountListQuery): Promise<Page<Account>>;
  /** `identifier`: an ID, name, email, DNA path or an L/G/R/T/F filter. */
  select(actor: Actor, scope: AccountScope, identifier: string, paging: AccountPaging): Promise<Page<Account>>;
  update(actor: Actor, identifier: string, patch: AccountPatch): Promise<AccountResult>;
  remove(actor: Actor, identifier: string): Promise<AccountResult>;
  rotateSelf(actor: Actor, input: SelfRotate): Promise<SelfRotateResult>;
  status(actor: Actor): Promise<UserStatus>;
}
