import { describe, expect, it } from 'vitest';
import type { Account } from '../contract/accounts/schemas';
import { aclEdit, aclOf, accountCreate, accountPatch, blankForm, formOf, formProblems, mapperRows, mapperText, treeRows } from './src/tabs/account-form';
import { hourBuckets } from './src/tabs/recent-data';

// fixed-date: the form only shows these times; it never compares them with a clock.
const account = (over: Partial<Account>): Account => ({
  ID: 2, ParentID: 1, OwnerID: 1, DNA: '.1.2.', Name: 'shop', Email: 'shop@example.test', Alias: '', BillingEmail: '', QRCode: '',
  Role: 'user', Level: 0, Gear: 0, Tier: 0, Factor: 1, Rates: 1, Status: true, Suspended: false, Balance: 5, CreditBalance: [],
  DailyLimit: null, HardLimit: null, SoftLimit: null, UserLimit: null, AutoQuota: false, RPM: null, RPH: null, RPD: null, TPM: null, TPH: null, TPD: null,
  Resources: '', AllowIPs: '', AllowModels: '', AllowLevels: '', ModelMapper: '', LevelMapper: '', ModelLimits: {},
  Children: 0, KeyHint: 'abcd', CreatedAt: '2026-11-01T00:00:00.000Z', UpdatedAt: '2026-11-01T00:00:00.000Z', ...over,
});

describe('account form', () => {
  it('reads stored access lists and writes the edit that sets exactly what is shown', () => {
    expect(aclOf('')).toEqual({ mode: 'all', entries: [] });
    expect(aclOf('-*')).toEqual({ mode: 'none', entries: [] });
    expect(aclOf('gpt-4o* claude-*')).toEqual({ mode: 'only', entries: ['gpt-4o*', 'claude-*'] });
    expect(aclEdit({ mode: 'only', entries: ['1', '2'] })).toBe('* 1 2');
    expect(aclEdit({ mode: 'only', entries: [] })).toBe('-*');
    expect(aclEdit({ mode: 'all', entries: ['x'] })).toBe('*');
    expect(aclEdit({ mode: 'inherit', entries: [] })).toBeUndefined();
  });

  it('sends only what changed, with empty limits as null and removed model limits cleared first', () => {
    const a = account({ RPM: 60, AllowModels: 'gpt-4o*', ModelLimits: { 'gpt-4o': { rpm: 30 }, 'o3': { tpm: 100 } }, ModelMapper: 'gpt-3.5*=gpt-4o-mini' });
    const base = formOf(a);
    expect(accountPatch(structuredClone(base), base, true)).toEqual({ patch: {}, clearModelLimits: false });
    const f = structuredClone(base);
    f.Alias = 'The Shop';
    f.limits.RPM = '';
    f.limits.SoftLimit = '2.5';
    f.acl.AllowIPs = { mode: 'only', entries: ['10.0.0.0/8'] };
    f.ModelLimits = f.ModelLimits.filter((r) => r.model === 'gpt-4o');
    f.Level = '7';
    const { patch, clearModelLimits } = accountPatch(f, base, true);
    expect(patch).toEqual({ Alias: 'The Shop', RPM: null, SoftLimit: 2.5, AllowIPs: '* 10.0.0.0/8', ModelLimits: { 'gpt-4o': { rpm: 30 } }, Level: 7 });
    expect(clearModelLimits).toBe(true);
    // No Owner-only fields for a caller that may not set them.
    expect(accountPatch(f, base, false).patch).not.toHaveProperty('Level');
    // Every row removed: the limits are cleared in the one request.
    const none = structuredClone(base);
    none.ModelLimits = [];
    expect(accountPatch(none, base, true)).toEqual({ patch: { ModelLimits: '*' }, clearModelLimits: false });
  });

  it('creates with the fields filled in only; inherited lists are left out', () => {
    const f = blankForm();
    f.Name = 'shop1';
    f.Email = 'shop1@example.test';
    f.limits.RPM = '100';
    f.acl.AllowModels = { mode: 'only', entries: ['gpt-4o*'] };
    expect(accountCreate(f, '5', '30', true)).toEqual({ Name: 'shop1', Email: 'shop1@example.test', CreditGranted: 5, Days: 30, RPM: 100, AllowModels: '* gpt-4o*' });
    expect(formProblems(blankForm(), true)).toMatchObject({ Name: expect.any(String), Email: expect.any(String) });
    const bad = structuredClone(f);
    bad.limits.RPM = '1.5';
    expect(formProblems(bad, true)).toEqual({ RPM: 'RPM: a whole number, 0 or more' });
  });

  it('round-trips mapper text as rows', () => {
    expect(mapperRows('gpt-4*=2, claude*=3')).toEqual([{ key: 'gpt-4*', value: '2' }, { key: 'claude*', value: '3' }]);
    expect(mapperText([{ key: 'a', value: 'b' }, { key: ' ', value: 'x' }])).toBe('a=b');
  });

  it('orders the tree by DNA and keeps the path to each match', () => {
    const rows = [
      account({ ID: 10, DNA: '.1.2.10.', Name: 'leaf' }), account({ ID: 2, DNA: '.1.2.', Name: 'reseller' }),
      account({ ID: 9, DNA: '.1.9.', Name: 'other' }), account({ ID: 3, DNA: '.1.3.', Name: 'third' }),
    ];
    expect(treeRows(rows, '.1.', '').map((r) => [r.account.Name, r.depth])).toEqual([['reseller', 0], ['leaf', 1], ['third', 0], ['other', 0]]);
    expect(treeRows(rows, '.1.', 'lea').map((r) => [r.account.Name, r.match])).toEqual([['reseller', false], ['leaf', true]]);
  });
});

describe('recent requests per hour', () => {
  // fixed-date: hourBuckets is pure: hours come from the requests' own times.
  it('counts requests and abnormal ones per UTC hour, keeping empty hours between', () => {
    const r = (at: string, status: 'ok' | 'abnormal') => ({ account_id: 7, request_id: null, created_at: at, model: 'm', endpoint: '/v1/chat/completions', level: 1, prompt: 1, completion: 2, reasoning: 0, cached: 0, credit_used: 0, status, duration_ms: 120, first_byte_ms: 40, key_kind: null });
    const b = hourBuckets([r('2026-11-23T10:05:00Z', 'ok'), r('2026-11-23T10:55:00Z', 'abnormal'), r('2026-11-23T12:01:00Z', 'ok')]);
    expect(b.map((x) => [new Date(x.hour * 1000).toISOString(), x.requests, x.abnormal])).toEqual([
      ['2026-11-23T10:00:00.000Z', 2, 1], ['2026-11-23T11:00:00.000Z', 0, 0], ['2026-11-23T12:00:00.000Z', 1, 0],
    ]);
  });
});
