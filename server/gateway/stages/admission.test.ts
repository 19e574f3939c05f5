import { describe, expect, it } from 'vitest';
import { MemoryLimitStore } from '../limits/memory-store';
import { admit, type AdmissionDeps } from './admission';
import { accountRow, callFor, ownerRouting } from './test-call';

function deps(balance: number | undefined, loaded = balance) {
  const limits = new MemoryLimitStore({ threshold: 5, windowMs: 60_000 });
  let loads = 0;
  const d: AdmissionDeps = {
    settings: { userMinBalance: 2 },
    balances: { peek: () => balance, load: async () => { loads++; return loaded ?? 0; } },
    limits,
  };
  return { d, limits, loads: () => loads };
}

describe('admission', () => {
  it('refuses a balance below the minimum, reading it only when not in memory', async () => {
    expect(admit(deps(5).d, callFor())).toBeNull();
    expect(admit(deps(1.5).d, callFor())).toMatchObject({ status: 402, code: 'insufficient_balance', message: expect.stringContaining('1.5000') });
    const cold = deps(undefined, 1);
    const v = admit(cold.d, callFor());
    expect(v).toBeInstanceOf(Promise);
    expect(await v).toMatchObject({ code: 'insufficient_balance' });
    expect(cold.loads()).toBe(1);
    // Root and Owners are exempt
    expect(admit(deps(0).d, callFor({ row: accountRow({ role: 'owner' }) }))).toBeNull();
  });

  it('counts admitted calls against RPM and refuses the one past it with the limit headers', () => {
    const { d } = deps(100);
    const row = accountRow({ rpm: 2 });
    expect(admit(d, callFor({ row }))).toBeNull();
    const c = callFor({ row });
    expect(admit(d, c)).toBeNull();
    expect(c.checks.map((k) => k.name)).toEqual(['RPM']);
    const refused = admit(d, callFor({ row }));
    expect(refused).toMatchObject({ status: 429, code: 'rate_limit_exceeded', headers: { 'x-ratelimit-scope': 'RPM', 'x-ratelimit-limit': '2', 'x-ratelimit-remaining': '0' } });
  });

  it('adds the per-model limit: the account ModelLimits entry, else the Owner MODEL_LIMITS one', () => {
    const { d } = deps(100);
    const owner = ownerRouting({ MODEL_LIMITS: { 'gpt-*': { rpm: 1 } } });
    const first = callFor({ owner });
    expect(admit(d, first)).toBeNull();
    expect(first.checks.map((k) => k.name)).toEqual(['gpt-4o rpm']);
    expect(admit(d, callFor({ owner }))).toMatchObject({ status: 429, headers: { 'x-ratelimit-scope': 'gpt-4o rpm' } });
    const own = callFor({ owner, row: accountRow({ id: 43, modelLimits: { 'gpt-4o': { rpm: 3 } } }) });
    expect(admit(d, own)).toBeNull();
    expect(own.checks).toEqual([expect.objectContaining({ name: 'gpt-4o rpm', limit: 3 })]);
  });
});
