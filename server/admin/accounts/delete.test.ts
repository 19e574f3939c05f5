import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../testing/gateway';
import { expectEnvelope } from '../../testing/http';
import { usageOf } from '../../testing/accounts';
import { lastLog, make, rowCounts } from './test-support';

let gw: TestGateway;
beforeAll(async () => { gw = await startTestGateway(); });
afterAll(async () => { await gw?.close(); });

const view = async (id: number) => (await gw.root.get(`/x-users/${id}`)).body[0];

describe('DELETE /x-users/{identifier}', () => {
  it('refuses (409) while the account has subaccounts, then deletes bottom-up', async () => {
    const parent = await make(gw, gw.root, { CreditGranted: 50 });
    const child = await make(gw, parent.client, { CreditGranted: 3 });
    const before = await rowCounts(gw);
    const e = expectEnvelope(await gw.root.delete(`/x-users/${parent.id}`), 409);
    expect(e).toMatchObject({ code: 'has_children', type: 'conflict_error' });
    expect(await rowCounts(gw)).toEqual(before);
    expect((await gw.root.delete(`/x-users/${child.name}`)).status).toBe(200);
    expect((await gw.root.delete(`/x-users/${parent.id}`)).status).toBe(200);
    expectEnvelope(await gw.root.get(`/x-users/${parent.id}`), 404);
  });

  it('answers the delete shape, refunds a funded parent at its Rates, and the key stops at once', async () => {
    const parent = await make(gw, gw.root, { CreditGranted: 50, Rates: 1.5 });
    const child = await make(gw, parent.client, { CreditGranted: 9, Rates: 3 });
    // Warm the key cache: the deletion must still take effect on the next request.
    expect((await child.client.get('/dashboard/status')).status).toBe(200);
    const parentBefore = (await view(parent.id)).Balance;
    const before = await rowCounts(gw);
    const r = await parent.client.delete(`/x-users/${child.id}`);
    expect(r.status).toBe(200);
    expect(r.body.Action).toBe('delete');
    expect(r.body.User).toMatchObject({ ID: child.id, Name: child.name, Email: child.email, Rates: 3, Balance: 9 });
    expect(r.body.User.CreditBalance).toEqual([expect.objectContaining({ amount: 9, balance: 9 })]);
    expect(r.body.Transfer).toEqual({ Kind: 'refund', FromID: child.id, ToID: parent.id, Debited: 9, Credited: 4.5 });
    expect((await view(parent.id)).Balance).toBeCloseTo(parentBefore + 4.5, 9);
    const refund = (await view(parent.id)).CreditBalance.find((c: any) => c.reference.startsWith('refund from deleted account'));
    expect(refund).toMatchObject({ amount: 4.5, balance: 4.5 });
    expect(Date.parse(refund.expires_at) - Date.parse(refund.granted_at)).toBe(180 * 86_400_000);
    expect(expectEnvelope(await child.client.get('/dashboard/status'), 401).code).toBe('invalid_api_key');
    // The account, its key and its card go; the parent gets one card; one log entry.
    expect(await rowCounts(gw)).toMatchObject({ accounts: before.accounts - 1, keys: before.keys - 1, cards: before.cards, logs: before.logs + 1 });
    expect(await lastLog(gw)).toMatchObject({ action: 'delete_user', target_id: child.id });
  });

  it('retires the credit of a child of Root or an Owner, and keeps usage not yet deducted out of a refund', async () => {
    const direct = await make(gw, gw.root, { CreditGranted: 10 });
    const gone = await gw.root.delete(`/x-users/${direct.email}`);
    expect(gone.body.Transfer).toEqual({ Kind: 'refund', FromID: direct.id, ToID: null, Debited: 10, Credited: 0 });

    const parent = await make(gw, gw.root, { CreditGranted: 50 });
    const child = await make(gw, parent.client, { CreditGranted: 10 });
    gw.gateway.usage.record(usageOf({ id: child.id, name: child.name, email: child.email, dna: child.dna, ownerId: 1, key: child.key }, { creditUsed: 3 }));
    const r = await parent.client.delete(`/x-users/${child.dna}`);
    expect(r.body.Transfer).toEqual({ Kind: 'refund', FromID: child.id, ToID: parent.id, Debited: 7, Credited: 7 });
  });

  it('takes the news aimed at the account with it', async () => {
    const t = await make(gw, gw.root);
    await gw.root.post(`/x-news/${t.id}`, { title: 'hello', content: 'for you' });
    await gw.root.post(`/x-news/${t.dna}`, { title: 'hello all', content: 'for your tree' });
    const count = async () => (await gw.gateway.database.rows<{ n: number }>(sql`select count(*)::int as n from news where target_id = ${t.id} or target_dna = ${t.dna}`))[0].n;
    expect(await count()).toBe(2);
    await gw.root.delete(`/x-users/${t.id}`);
    expect(await count()).toBe(0);
  });

  it('answers 403 for itself and, to a subaccount, outside its subtree as for the unknown; 404 to the Owner for the unknown; 400 for a filter; and writes nothing', async () => {
    const a = await make(gw, gw.root, { CreditGranted: 50 });
    const b = await make(gw, gw.root, { CreditGranted: 50 });
    const before = await rowCounts(gw);
    expect(expectEnvelope(await a.client.delete(`/x-users/${a.id}`), 403).message).toMatch(/your own account/);
    expectEnvelope(await gw.root.delete('/x-users/1'), 403);
    const outOfScope = expectEnvelope(await a.client.delete('/x-users/424242'), 403);
    expect(outOfScope.code).toBe('out_of_scope');
    for (const target of [b.id, b.name, 'root', '1']) expect(expectEnvelope(await a.client.delete(`/x-users/${target}`), 403), String(target)).toEqual(outOfScope);
    expectEnvelope(await gw.root.delete('/x-users/424242'), 404);
    expectEnvelope(await gw.root.delete('/x-users/nobody-at-all'), 404);
    expectEnvelope(await gw.root.delete('/x-users/L1'), 400);
    expectEnvelope(await gw.root.delete('/x-users/.1.x.'), 400);
    expectEnvelope(await gw.as(null).delete(`/x-users/${a.id}`), 401);
    expect(await rowCounts(gw)).toEqual(before);
  });
});
