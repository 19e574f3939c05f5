/**
 * Stage 1, authenticate: who is calling, and under which rules (the account row, its parsed
 * profile, its Owner's routing; from memory after the account's first call). Refuses 401
 * missing_api_key / invalid_api_key / account_disabled and 403 account_suspended.
 */
import { credentialFrom } from '../../core/http/credentials';
import type { AccountCache, AccountRow } from '../../state/accounts/account-cache';
import type { OwnerConfigStore, OwnerRouting } from '../../state/owner-config/store';
import type { AccountProfile, AccountProfiles } from '../admission/profile';
import { ownerRules } from '../admission/owner-rules';
import type { ProxyCall } from '../call';
import type { Refusal, Verdict } from '../errors';

export interface AuthenticateDeps {
  accounts: Pick<AccountCache, 'peek' | 'resolve'>;
  config: Pick<OwnerConfigStore, 'peekRouting' | 'routing'>;
  profiles: Pick<AccountProfiles, 'peek' | 'load'>;
}

const MISSING_KEY: Refusal = { status: 401, message: 'Missing API key: send "Authorization: Bearer <key>", "x-api-key" or (Gemini\'s routes) "x-goog-api-key"', code: 'missing_api_key' };
const INVALID_KEY: Refusal = { status: 401, message: 'Invalid API key', code: 'invalid_api_key' };
const DISABLED: Refusal = { status: 401, message: 'This account is disabled', code: 'account_disabled' };
const SUSPENDED: Refusal = { status: 403, message: 'This account is suspended', code: 'account_suspended' };

/** Synchronous when everything is in memory; a promise only when something must be read. */
export function authenticate(d: AuthenticateDeps, c: ProxyCall): Verdict | Promise<Verdict> {
  // Gemini's clients may give the key as `?key=` (the call's path is logged without its query).
  const apiKey = credentialFrom(c.ex.headers) ?? c.params?.key;
  if (!apiKey) return MISSING_KEY;
  const row = d.accounts.peek(apiKey);
  if (row) return admitAccount(d, c, row);
  return d.accounts.resolve(apiKey).then((r) => (r ? admitAccount(d, c, r) : INVALID_KEY));
}

function admitAccount(d: AuthenticateDeps, c: ProxyCall, row: AccountRow): Verdict | Promise<Verdict> {
  if (!row.status) return DISABLED;
  if (row.suspended) return SUSPENDED;
  c.row = row;
  const owner = d.config.peekRouting(row.ownerId);
  const profile = d.profiles.peek(row);
  if (owner && profile) {
    setRules(c, owner, profile);
    return null;
  }
  return loadRules(d, c, row, owner, profile);
}

async function loadRules(d: AuthenticateDeps, c: ProxyCall, row: AccountRow, owner: OwnerRouting | undefined, profile: AccountProfile | undefined): Promise<Verdict> {
  owner ??= await d.config.routing(row.ownerId);
  profile ??= await d.profiles.load(row);
  setRules(c, owner, profile);
  return null;
}

function setRules(c: ProxyCall, owner: OwnerRouting, profile: AccountProfile): void {
  c.owner = owner;
  c.profile = profile;
  c.ownerRules = ownerRules(owner);
}
