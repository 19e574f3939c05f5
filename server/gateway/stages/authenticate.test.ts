import { describe, expect, it } from 'vitest';
import type { AccountRow } from '../../state/accounts/account-cache';
import type { OwnerRouting } from '../../state/owner-config/store';
import { buildProfile, type AccountProfile } from '../admission/profile';
import { ProxyCall } from '../call';
import { authenticate, type AuthenticateDeps } from './authenticate';
import { accountRow, fakeExchange, ownerRouting } from './test-support';

/** In-memory account cache, config store and profiles; `cold` ones answer only asynchronously. */
function deps(rows: Record<string, AccountRow>, opts: { cold?: boolean } = {}) {
  const routing = ownerRouting({ RESOURCES: '/v1/chat/completions' });
  const reads = { accounts: 0, routing: 0, profiles: 0 };
  const profiles = new Map<number, AccountProfile>();
  const d: AuthenticateDeps = {
    accounts: {
      peek: (key) => (opts.cold ? undefined : rows[key]),
      resolve: async (key) => { reads.accounts++; return rows[key] ?? null; },
    },
    config: {
      peekRouting: () => (opts.cold ? undefined : routing),
      routing: async () => { reads.routing++; return routing; },
    },
    profiles: {
      peek: (row) => (opts.cold ? undefined : profiles.get(row.id) ?? (profiles.set(row.id, buildProfile(row)), profiles.get(row.id))),
      load: async (row) => { reads.profiles++; return buildProfile(row); },
    },
  };
  return { d, reads, routing };
}

const call = (headers: Record<string, string>) => new ProxyCall(fakeExchange({ headers }), 'chat', '/v1/chat/completions');

describe('authenticate', () => {
  const rows = {
    'sk-good': accountRow({ id: 7, level: 3 }),
    'sk-off': accountRow({ id: 8, status: false }),
    'sk-suspended': accountRow({ id: 9, suspended: true }),
  };

  it('passes synchronously from memory and fills in the account, its profile and the Owner rules', () => {
    const { d, routing } = deps(rows);
    const c = call({ authorization: 'Bearer sk-good' });
    expect(authenticate(d, c)).toBeNull();
    expect(c.row.id).toBe(7);
    expect(c.profile.row).toBe(c.row);
    expect(c.owner).toBe(routing as OwnerRouting);
    expect(c.ownerRules.resources.allows('/v1/chat/completions')).toBe(true);
    expect(c.ownerRules.resources.allows('/v1/embeddings')).toBe(false);
    // Anthropic clients send x-api-key
    expect(authenticate(d, call({ 'x-api-key': 'sk-good' }))).toBeNull();
  });

  it('reads the database only on a miss, and then answers through a promise', async () => {
    const { d, reads } = deps(rows, { cold: true });
    const c = call({ authorization: 'Bearer sk-good' });
    const v = authenticate(d, c);
    expect(v).toBeInstanceOf(Promise);
    expect(await v).toBeNull();
    expect(reads).toEqual({ accounts: 1, routing: 1, profiles: 1 });
    expect(c.profile.row.id).toBe(7);
  });

  it('refuses a missing, unknown, disabled or suspended key', async () => {
    for (const cold of [false, true]) {
      const { d } = deps(rows, { cold });
      expect(await authenticate(d, call({}))).toMatchObject({ status: 401, code: 'missing_api_key' });
      expect(await authenticate(d, call({ authorization: 'Bearer sk-unknown' }))).toMatchObject({ status: 401, code: 'invalid_api_key' });
      expect(await authenticate(d, call({ authorization: 'Bearer sk-off' }))).toMatchObject({ status: 401, code: 'account_disabled' });
      expect(await authenticate(d, call({ authorization: 'Bearer sk-suspended' }))).toMatchObject({ status: 403, code: 'account_suspended' });
    }
  });
});
