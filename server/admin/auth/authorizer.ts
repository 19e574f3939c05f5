import type { Access, RequestContext } from '../../../contract/trpc';
import type { AuthService, Caller } from '../../../contract/services';
import { ApiError } from '../../../contract/errors';
import type { AccountCache, AccountRow } from '../../state/accounts/account-cache';
import { toCaller } from '../../state/accounts/caller';

export interface ManagePolicy {
  /** Whether the account may use manage endpoints; the reason when it may not. */
  check(account: AccountRow): Promise<{ allowed: boolean; reason?: string }>;
}

export class Authorizer implements AuthService {
  constructor(private readonly cache: AccountCache, private readonly manage: ManagePolicy) {}

  async authorize(ctx: RequestContext, access: Access): Promise<Caller> {
    if (!ctx.apiKey) throw new ApiError(401, 'Missing API key: send "Authorization: Bearer <key>"', 'missing_api_key');
    const account = await this.cache.resolve(ctx.apiKey);
    if (!account) throw new ApiError(401, 'Invalid API key', 'invalid_api_key');
    if (!account.status) throw new ApiError(401, 'This account is disabled', 'account_disabled');
    const caller = toCaller(account);
    switch (access) {
      case 'owner':
        if (!caller.isOwner) throw new ApiError(403, 'Only an Owner account may use this endpoint', 'owner_only');
        break;
      case 'root':
        if (!caller.isRoot) throw new ApiError(403, 'Only Root may do this', 'root_only');
        break;
      case 'manage': {
        const verdict = await this.manage.check(account);
        if (!verdict.allowed) throw new ApiError(403, verdict.reason ?? 'Manage permission required', 'manage_denied');
        break;
      }
    }
    return caller;
  }
}
