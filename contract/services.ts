import type { Access, RequestContext } from './trpc';
import type { Caller } from './auth/caller';
import type { ProviderKeyService } from './keys/service';
import type { OwnerConfigService } from './config/service';
import type { HelperService } from './helpers/service';
import type { DashboardService } from './dashboard/service';
import type { BillingService } from './billing/service';
import type { AccountService } from './accounts/service';
import type { NewsService } from './news/service';
import type { BatchService } from './batches/service';

export type { Caller, Actor, Role } from './auth/caller';

export interface AuthService {
  /** Resolves `ctx.apiKey` to an account and checks `access`; throws 401/403 ApiErrors. */
  authorize(ctx: RequestContext, access: Access): Promise<Caller>;
}

/** Everything the contract's procedures delegate to; the server provides the implementation. */
export interface Services {
  auth: AuthService;
  keys: ProviderKeyService;
  config: OwnerConfigService;
  helpers: HelperService;
  dashboard: DashboardService;
  billing: BillingService;
  accounts: AccountService;
  news: NewsService;
  batches: BatchService;
}
