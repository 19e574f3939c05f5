import { describe, expect, it } from 'vitest';
import { checkAccess } from './access';
import { accountRow, callFor, fakeExchange, ownerRouting } from './test-support';

describe('access checks', () => {
  it('lets an unrestricted account through without reading the peer address', () => {
    const ex = fakeExchange();
    Object.defineProperty(ex, 'ip', { get: () => { throw new Error('the peer address was read'); } });
    expect(checkAccess(callFor({ ex }))).toBeNull();
  });

  it('refuses by AllowIPs, Resources (account and Owner), AllowModels and AllowLevels, in that order', () => {
    const ips = callFor({ row: accountRow({ allowIps: '10.0.0.0/8', allowModels: 'none' }), ex: fakeExchange({ ip: '192.168.1.4' }) });
    expect(checkAccess(ips)).toMatchObject({ status: 403, code: 'ip_not_allowed', message: expect.stringContaining('192.168.1.4') });
    expect(checkAccess(callFor({ row: accountRow({ allowIps: '10.0.0.0/8' }), ex: fakeExchange({ ip: '10.1.2.3' }) }))).toBeNull();

    expect(checkAccess(callFor({ row: accountRow({ resources: '/v1/embeddings' }) }))).toMatchObject({ code: 'resource_not_allowed' });
    expect(checkAccess(callFor({ owner: ownerRouting({ RESOURCES: '/v1/messages' }) }))).toMatchObject({ code: 'resource_not_allowed' });
    expect(checkAccess(callFor({ owner: ownerRouting({ RESOURCES: '/v1/chat/*' }) }))).toBeNull();

    const model = callFor({ row: accountRow({ allowModels: 'claude-*' }) });
    expect(checkAccess(model)).toMatchObject({ status: 403, code: 'model_not_allowed', message: expect.stringContaining('gpt-4o') });
    model.model = 'claude-haiku-4-5';
    expect(checkAccess(model)).toBeNull();

    const level = callFor({ row: accountRow({ allowLevels: '1,2' }) });
    level.level = 3;
    expect(checkAccess(level)).toMatchObject({ status: 403, code: 'level_not_allowed', message: expect.stringContaining('Level 3') });
  });
});
