/**
 * The generated TypeScript client (clients/typescript) against a real gateway: an Owner adds a
 * provider key, creates a subaccount, updates and lists it (paging headers through the *Raw
 * methods), the subaccount reads its bill, and the Owner deletes it. Typechecked by
 * clients/tsconfig.json (npm run openapi:check), run by vitest.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../server/testing/gateway';
import { usageOf } from '../server/testing/accounts';
import {
  AccountsApi, BillingApi, Configuration, DashboardApi, ProviderKeyCreateConfigProviderTypeEnum, ProviderKeysApi,
  type ProviderKey,
} from './typescript';

const SECRET = 'sk-proj-typescript-client-0123456789abcdef';
let gw: TestGateway;
let owner: Configuration;

beforeAll(async () => {
  gw = await startTestGateway();
  owner = new Configuration({ basePath: gw.url, accessToken: gw.rootKey, fetchApi: fetch });
});
afterAll(async () => { await gw?.close(); });

/** typescript-fetch 4.3.1 throws the failed Response itself. */
async function failure(call: Promise<unknown>): Promise<{ status: number; error: { message: string; type: string; code: unknown } }> {
  const thrown = await call.then(() => undefined, (e: unknown) => e);
  if (!(thrown instanceof Response)) throw new Error(`expected an HTTP error, got ${String(thrown)}`);
  const body = await thrown.json();
  return { status: thrown.status, error: body.error };
}

describe('generated TypeScript client', () => {
  let key: ProviderKey;

  it('adds, lists, filters and updates a provider key', async () => {
    const keys = new ProviderKeysApi(owner);
    const created = await keys.keysCreateRaw({
      providerKeyCreate: {
        Name: 'primary', Level: 2, Provider: 'https://api.openai.com/v1', SecretKey: SECRET, Status: true,
        config: { provider_type: ProviderKeyCreateConfigProviderTypeEnum.Standard },
      },
    });
    expect(created.raw.status).toBe(201);
    const result = await created.value();
    expect(result.Action).toBe('add');
    expect(result.Key).toMatchObject({ Name: 'primary', Level: 2, Status: true, SecretHint: 'cdef', config: { provider_type: 'standard' } });
    expect(JSON.stringify(result)).not.toContain(SECRET);
    key = result.Key;

    const page = await keys.keysListRaw({ level: 2, size: 1 });
    expect(page.raw.headers.get('X-Total-Count')).toBe('1');
    expect(page.raw.headers.get('X-Per-Page')).toBe('1');
    expect((await page.value()).map((k) => k.ID)).toEqual([key.ID]);
    expect((await keys.keysSelect({ selector: 'L2' })).map((k) => k.ID)).toEqual([key.ID]);

    const updated = await keys.keysUpdate({ id: String(key.ID), keysUpdateBody: { Name: 'renamed', Status: false } });
    expect(updated).toMatchObject({ Action: 'update', Key: { ID: key.ID, Name: 'renamed', Status: false } });
  });

  it('surfaces errors as the envelope: bad input 400, no key 401', async () => {
    const bad = await failure(new ProviderKeysApi(owner).keysCreate({ providerKeyCreate: { Provider: 'https://api.openai.com', SecretKey: 'short' } }));
    expect(bad.status).toBe(400);
    expect(bad.error).toMatchObject({ type: 'invalid_request_error', message: expect.stringContaining('SecretKey') });
    const anonymous = new ProviderKeysApi(new Configuration({ basePath: gw.url, fetchApi: fetch }));
    expect((await failure(anonymous.keysList({}))).status).toBe(401);
  });

  it('creates a subaccount, updates and lists it, reads its bill, and deletes it', async () => {
    const accounts = new AccountsApi(owner);
    const created = await accounts.accountsCreateRaw({ accountCreate: { Name: 'ts-client-user', Email: 'ts-client@example.test', CreditGranted: 50 } });
    expect(created.raw.status).toBe(201);
    const { User: user } = await created.value();
    expect(user).toMatchObject({ Name: 'ts-client-user', Email: 'ts-client@example.test', ParentID: 1 });
    expect(user.SecretKey).toMatch(/^sk-Xvs[A-Za-z0-9]{45}$/);

    const updated = await accounts.accountsUpdate({ identifier: String(user.ID), accountsUpdateBody: { Alias: 'TS client', RPM: 60 } });
    expect(updated).toMatchObject({ Action: 'update', User: { ID: user.ID, Alias: 'TS client', RPM: 60 } });

    await accounts.accountsCreate({ accountCreate: { Name: 'ts-client-other', Email: 'ts-other@example.test', CreditGranted: 5 } });
    const page = await accounts.accountsChildrenRaw({ size: 1 });
    expect(page.raw.headers.get('X-Total-Count')).toBe('2');
    expect(page.raw.headers.get('X-Total-Pages')).toBe('2');
    expect(await page.value()).toHaveLength(1);

    // One proxied request's usage, as the proxy reports it, so the bill has something to show.
    gw.gateway.usage.record(usageOf({ id: user.ID, ownerId: user.OwnerID, dna: user.DNA, name: user.Name, email: user.Email, key: user.SecretKey }, { creditUsed: 0.25 }));
    await gw.gateway.usage.flush();
    const asUser = new Configuration({ basePath: gw.url, accessToken: user.SecretKey, fetchApi: fetch });
    const bill = await new BillingApi(asUser).billingBill({});
    expect(bill).toMatchObject({ object: 'bill_info', total_requests: 1, total_credit_used: 0.25 });
    expect(bill.daily_costs).toHaveLength(1);
    expect((await new DashboardApi(asUser).dashboardInfo()).balance).toBeGreaterThan(0);

    const removed = await accounts.accountsRemove({ identifier: String(user.ID) });
    expect(removed).toMatchObject({ Action: 'delete', User: { ID: user.ID } });
    expect((await failure(new BillingApi(asUser).billingBill({}))).status).toBe(401);
  });

  it('deletes the provider key', async () => {
    const keys = new ProviderKeysApi(owner);
    expect(await keys.keysRemove({ id: String(key.ID) })).toMatchObject({ Action: 'delete', Key: { ID: key.ID } });
    expect((await failure(keys.keysSelect({ selector: String(key.ID) }))).status).toBe(404);
  });
});
