import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../testing/gateway';
import { expectEnvelope } from '../../testing/http';
import { fresh, lastLog, make, rowCounts, type Made } from './test-support';

let gw: TestGateway;
let reseller: Made;
let child: Made;
let sibling: Made;

beforeAll(async () => {
  gw = await startTestGateway();
  reseller = await make(gw, gw.root, { CreditGranted: 100, Rates: 1.25 });
  child = await make(gw, reseller.client, { CreditGranted: 10, Rates: 2.5 });
  sibling = await make(gw, gw.root, { CreditGranted: 30 });
});
afterAll(async () => { await gw?.close(); });

const view = async (id: number) => (await gw.root.get(`/x-users/${id}`)).body[0];

describe('PUT/POST /x-users/{identifier}', () => {
  it('AutoQuota: each grant raises HardLimit by the amount and sets SoftLimit to 80% of it', async () => {
    const auto = await make(gw, gw.root, { CreditGranted: 10, AutoQuota: true });
    expect(await view(auto.id)).toMatchObject({ HardLimit: 10, SoftLimit: 8, AutoQuota: true });
    expect((await gw.root.put(`/x-users/${auto.id}`, { CreditGranted: 5 })).body.User).toMatchObject({ HardLimit: 15, SoftLimit: 12 });
    // A HardLimit sent with the grant is the one the grant raises.
    expect((await gw.root.put(`/x-users/${auto.id}`, { CreditGranted: 5, HardLimit: 40 })).body.User).toMatchObject({ HardLimit: 45, SoftLimit: 36 });
    // A take-back or a change without credit leaves the caps alone.
    expect((await gw.root.put(`/x-users/${auto.id}`, { CreditGranted: -1 })).body.User).toMatchObject({ HardLimit: 45, SoftLimit: 36 });
    const manual = await make(gw, gw.root, { CreditGranted: 10, HardLimit: 20 });
    expect((await gw.root.put(`/x-users/${manual.id}`, { CreditGranted: 5 })).body.User).toMatchObject({ HardLimit: 20, SoftLimit: null, AutoQuota: false });
  });

  it('updates every field group, by PUT and by POST, and logs it', async () => {
    const target = await make(gw, gw.root, { CreditGranted: 5 });
    const { Name, Email } = fresh('renamed');
    const r = await gw.root.put(`/x-users/${target.name}`, {
      Name, Email: Email.toUpperCase(), Alias: 'New alias', BillingEmail: 'pay@example.test', QRCode: 'https://pay.example/qr',
      Status: true, Suspended: false, DailyLimit: 3.5, HardLimit: 100, SoftLimit: 80, UserLimit: 5, AutoQuota: true,
      RPM: 60, RPH: 600, RPD: 6000, TPM: 1000, TPH: 10_000, TPD: 100_000,
      Resources: '/v1/chat/completions', AllowIPs: '192.0.2.0/24', AllowModels: 'gpt-4o*', AllowLevels: '1 2',
      ModelMapper: 'fast=gpt-4o-mini', ModelLimits: { 'gpt-4o': { rpm: 3 } }, Level: 2, Factor: 1.1, LevelMapper: 'gpt-4o*=2', Gear: 1, Tier: 2,
    });
    expect(r.status).toBe(200);
    expect(r.body.Action).toBe('update');
    expect(r.body.Transfer).toBeNull();
    const expected = {
      ID: target.id, Name, Email: Email.toLowerCase(), Alias: 'New alias', BillingEmail: 'pay@example.test', QRCode: 'https://pay.example/qr',
      DailyLimit: 3.5, HardLimit: 100, SoftLimit: 80, UserLimit: 5, AutoQuota: true, RPM: 60, RPH: 600, RPD: 6000, TPM: 1000, TPH: 10_000, TPD: 100_000,
      Resources: '/v1/chat/completions', AllowIPs: '192.0.2.0/24', AllowModels: 'gpt-4o*', AllowLevels: '1 2',
      ModelMapper: 'fast=gpt-4o-mini', ModelLimits: { 'gpt-4o': { rpm: 3 } }, Level: 2, Factor: 1.1, LevelMapper: 'gpt-4o*=2', Gear: 1, Tier: 2,
    };
    expect(r.body.User).toMatchObject(expected);
    expect(await view(target.id)).toMatchObject(expected);
    expect(await lastLog(gw)).toMatchObject({ action: 'update_user', target_id: target.id });

    const post = await gw.root.post(`/x-users/${target.id}`, { RPM: null, HardLimit: null, SoftLimit: null, ModelMapper: '' });
    expect(post.body.User).toMatchObject({ RPM: null, HardLimit: null, SoftLimit: null, ModelMapper: '' });
    // 0 is "no limit" too, stored as null.
    expect((await gw.root.put(`/x-users/${target.id}`, { TPD: 0 })).body.User.TPD).toBeNull();
  });

  it('edits ACL lists the reference way: add, -remove, * lifts, -* denies, removing the last entry denies', async () => {
    const t = await make(gw, gw.root);
    const edit = async (body: object) => (await gw.root.put(`/x-users/${t.id}`, body)).body.User;
    expect((await edit({ AllowModels: 'gpt-4o claude-3' })).AllowModels).toBe('gpt-4o claude-3');
    expect((await edit({ AllowModels: 'o1,-gpt-4o' })).AllowModels).toBe('claude-3 o1');
    expect((await edit({ AllowModels: '* gpt-4o-mini' })).AllowModels).toBe('gpt-4o-mini');
    expect((await edit({ AllowModels: '-gpt-4o-mini' })).AllowModels).toBe('-*');
    expect((await edit({ AllowModels: 'gpt-5' })).AllowModels).toBe('gpt-5');
    expect((await edit({ AllowModels: '*' })).AllowModels).toBe('');
    expect((await edit({ AllowLevels: '01 2 2' })).AllowLevels).toBe('1 2');
    expect((await edit({ AllowIPs: '10.0.0.1 2001:db8::/32' })).AllowIPs).toBe('10.0.0.1 2001:db8::/32');
    expect((await edit({ AllowIPs: '-*' })).AllowIPs).toBe('-*');
    expect((await edit({ Resources: '/v1/embeddings' })).Resources).toBe('/v1/embeddings');
    expect((await edit({ Resources: '' })).Resources).toBe('');
    expect((await edit({ ModelLimits: { a: { rpm: 1 } } })).ModelLimits).toEqual({ a: { rpm: 1 } });
    expect((await edit({ ModelLimits: { b: { tpm: 2 } } })).ModelLimits).toEqual({ a: { rpm: 1 }, b: { tpm: 2 } });
    expect((await edit({ ModelLimits: '-a' })).ModelLimits).toEqual({ b: { tpm: 2 } });
    expect((await edit({ ModelLimits: '*' })).ModelLimits).toEqual({});
  });

  it('keeps a subaccount within its funded parent on update', async () => {
    await gw.root.put(`/x-users/${reseller.id}`, { RPM: 100, AllowModels: 'gpt-4o*' });
    const before = await rowCounts(gw);
    expect(expectEnvelope(await reseller.client.put(`/x-users/${child.id}`, { RPM: 101 }), 400).code).toBe('wider_than_parent');
    expectEnvelope(await gw.root.put(`/x-users/${child.id}`, { AllowModels: 'claude-3' }), 400);
    expectEnvelope(await gw.root.put(`/x-users/${child.id}`, { Rates: 1 }), 400);
    expect(await rowCounts(gw)).toEqual(before);
    expect((await reseller.client.put(`/x-users/${child.id}`, { RPM: 100, AllowModels: 'gpt-4o-mini' })).status).toBe(200);
    await gw.root.put(`/x-users/${reseller.id}`, { RPM: null, AllowModels: '*' });
  });

  it('disables and suspends at once: Status false refuses the key, Suspended refuses manage', async () => {
    const t = await make(gw, gw.root, { CreditGranted: 50 });
    expect((await t.client.get('/x-users')).status).toBe(200);
    await gw.root.put(`/x-users/${t.id}`, { Suspended: true });
    expect((await t.client.get('/dashboard/status')).body).toMatchObject({ manage: false, suspended: true });
    expect(expectEnvelope(await t.client.get('/x-users'), 403).message).toMatch(/suspended/);
    await gw.root.put(`/x-users/${t.id}`, { Suspended: false, Status: false });
    expect(expectEnvelope(await t.client.get('/dashboard/status'), 401).code).toBe('account_disabled');
    await gw.root.put(`/x-users/${t.id}`, { Status: true });
    expect((await t.client.get('/x-users')).status).toBe(200);
  });

  it('lets an account update its own profile only, never Status, Suspended, credit or Rates', async () => {
    const self = await make(gw, gw.root, { CreditGranted: 50 });
    const { Name } = fresh('myself');
    const ok = await self.client.put(`/x-users/${self.id}`, { Name, Alias: 'Me', QRCode: 'qr' });
    expect(ok.body.User).toMatchObject({ Name, Alias: 'Me', QRCode: 'qr' });
    expect(await lastLog(gw)).toMatchObject({ action: 'update_self', target_id: self.id });
    const before = await rowCounts(gw);
    for (const body of [{ Status: false }, { Suspended: true }, { CreditGranted: 5 }, { Rates: 2 }, { Days: 10 }]) {
      expect(expectEnvelope(await self.client.put(`/x-users/${self.id}`, body), body.Days ? 400 : 403).message).toMatch(/self-update cannot change|Days/);
    }
    for (const body of [{ RPM: 5 }, { AllowModels: 'x' }, { ModelMapper: 'a=b' }, { HardLimit: 1 }]) {
      expect(expectEnvelope(await self.client.put(`/x-users/${Name}`, body), 403).message).toMatch(/set by your parent/);
    }
    expectEnvelope(await self.client.put(`/x-users/${self.id}`, { Level: 3 }), 403);
    expect(await rowCounts(gw)).toEqual(before);
    // Root (an Owner) may set its own limits and mappers, still not its State.
    expect((await gw.root.put('/x-users/1', { Alias: 'The Root', ModelMapper: 'x=y' })).body.User).toMatchObject({ Alias: 'The Root', ModelMapper: 'x=y' });
    expectEnvelope(await gw.root.put('/x-users/root', { Suspended: true }), 403);
    await gw.root.put('/x-users/1', { ModelMapper: '' });
  });

  it('lets only an Owner set Level, Role, Factor, LevelMapper, Gear and Tier', async () => {
    for (const body of [{ Level: 2 }, { Role: 'user' }, { Factor: 2 }, { LevelMapper: 'a=1' }, { Gear: 1 }, { Tier: 1 }]) {
      expectEnvelope(await reseller.client.put(`/x-users/${child.id}`, body), 403);
    }
    expectEnvelope(await gw.root.put(`/x-users/${child.id}`, { Role: 'owner' }), 400);
  });
});

describe('credit on update', () => {
  it('grants a card paid by a funded caller, converted between the Rates, valid Days', async () => {
    const before = (await view(reseller.id)).Balance;
    const r = await reseller.client.put(`/x-users/${child.id}`, { CreditGranted: 5, Days: 7 });
    expect(r.body.Transfer).toEqual({ Kind: 'grant', FromID: reseller.id, ToID: child.id, Debited: 2.5, Credited: 5 });
    const card = r.body.User.CreditBalance.find((c: any) => c.amount === 5);
    expect(Date.parse(card.expires_at) - Date.parse(card.granted_at)).toBe(7 * 86_400_000);
    // Days 7 expires first, so it is listed (and spent) first.
    expect(r.body.User.CreditBalance[0].amount).toBe(5);
    expect((await view(reseller.id)).Balance).toBeCloseTo(before - 2.5, 9);
  });

  it('takes credit back and refunds the funded parent at its Rates', async () => {
    const parentBefore = (await view(reseller.id)).Balance;
    const childBefore = (await view(child.id)).Balance;
    const r = await gw.root.put(`/x-users/${child.id}`, { CreditGranted: -4 });
    expect(r.body.Transfer).toEqual({ Kind: 'take_back', FromID: child.id, ToID: reseller.id, Debited: 4, Credited: 2 });
    expect(r.body.User.Balance).toBeCloseTo(childBefore - 4, 9);
    expect((await view(reseller.id)).Balance).toBeCloseTo(parentBefore + 2, 9);
    const refundCard = (await view(reseller.id)).CreditBalance.find((c: any) => c.reference.startsWith('taken back from'));
    expect(refundCard).toMatchObject({ amount: 2, balance: 2 });
  });

  it('retires credit taken from a child of Root or an Owner', async () => {
    const t = await make(gw, gw.root, { CreditGranted: 10 });
    const r = await gw.root.put(`/x-users/${t.id}`, { CreditGranted: -3 });
    expect(r.body.Transfer).toEqual({ Kind: 'take_back', FromID: t.id, ToID: null, Debited: 3, Credited: 0 });
    expect(r.body.User.Balance).toBe(7);
  });

  it('answers 402 for more than the target holds, or more than a funded caller has, and writes nothing', async () => {
    const before = await rowCounts(gw);
    expect(expectEnvelope(await gw.root.put(`/x-users/${child.id}`, { CreditGranted: -1000 }), 402).code).toBe('insufficient_credit');
    expect(expectEnvelope(await reseller.client.put(`/x-users/${child.id}`, { CreditGranted: 1000 }), 402).code).toBe('insufficient_balance');
    expect(await rowCounts(gw)).toEqual(before);
  });

  it('rescales the cards when Rates change, then grants at the new Rates', async () => {
    const t = await make(gw, gw.root, { CreditGranted: 10, Rates: 1 });
    const r = await gw.root.put(`/x-users/${t.id}`, { Rates: 2, CreditGranted: 1 });
    expect(r.body.User.Rates).toBe(2);
    expect(r.body.User.CreditBalance.map((c: any) => [c.amount, c.balance]).sort()).toEqual([[1, 1], [20, 20]]);
    expect(r.body.User.Balance).toBe(21);
  });
});

describe('refusals', () => {
  it('answers bad input with a 400 envelope, and writes nothing', async () => {
    const before = await rowCounts(gw);
    const cases: [unknown, RegExp][] = [
      [{}, /Nothing to update/],
      [{ Name: 'ab' }, /Name/],
      [{ Email: 'bad' }, /Email/],
      [{ CreditGranted: '5' }, /CreditGranted/],
      [{ CreditGranted: 2e9 }, /CreditGranted/],
      [{ Days: 5 }, /Days: applies to a positive CreditGranted/],
      [{ CreditGranted: -1, Days: 5 }, /Days/],
      [{ CreditGranted: 5, Days: 3651 }, /Days/],
      [{ CreditGranted: 5, Days: 1e9 }, /Days/],
      [{ CreditGranted: 5, Days: -1 }, /Days/],
      [{ CreditGranted: -2e9 }, /CreditGranted/],
      [{ UserLimit: 1_000_001 }, /UserLimit/],
      [{ RPM: 2_147_483_648 }, /RPM/],
      [{ Rates: -1 }, /Rates/],
      [{ RPM: 'many' }, /RPM/],
      [{ UserLimit: 1.5 }, /UserLimit/],
      [{ SoftLimit: 1000 }, /SoftLimit/],
      [{ Status: 1 }, /Status/],
      [{ AllowIPs: '1.2.3.4/40' }, /AllowIPs/],
      [{ AllowModels: '-bad!model' }, /AllowModels: "bad!model"/],
      [{ ModelMapper: 'a=b*' }, /ModelMapper/],
      [{ LevelMapper: 'a=1001' }, /LevelMapper/],
      [{ ModelLimits: 5 }, /ModelLimits/],
      [{ Level: 'two' }, /Level/],
      [{ ID: 5 }, /unknown field: ID/],
    ];
    await gw.root.put(`/x-users/${sibling.id}`, { HardLimit: 100 });
    const mid = await rowCounts(gw);
    for (const [body, message] of cases) {
      const e = expectEnvelope(await gw.root.put(`/x-users/${sibling.id}`, body), 400);
      expect(e.message, JSON.stringify(body)).toMatch(message);
    }
    expectEnvelope(await gw.root.request('PUT', `/x-users/${sibling.id}`, { raw: '{', headers: { 'content-type': 'application/json' } }), 400);
    expectEnvelope(await gw.root.request('POST', `/x-users/${sibling.id}`, { raw: 'a=b', headers: { 'content-type': 'text/plain' } }), 415);
    expectEnvelope(await gw.root.put('/x-users/L1', { Alias: 'x' }), 400);
    expect(await rowCounts(gw)).toEqual(mid);
    expect(mid.logs).toBe(before.logs + 1);
  });

  it('answers 409 for a Name or Email of another account; to a subaccount, 403 outside its subtree as for the unknown; to the Owner, 404 for the unknown', async () => {
    const before = await rowCounts(gw);
    expect(expectEnvelope(await gw.root.put(`/x-users/${child.id}`, { Name: sibling.name }), 409).code).toBe('duplicate_name');
    expect(expectEnvelope(await gw.root.put(`/x-users/${child.id}`, { Email: sibling.email.toUpperCase() }), 409).code).toBe('duplicate_email');
    const outOfScope = expectEnvelope(await reseller.client.put('/x-users/987654', { Alias: 'x' }), 403);
    expect(outOfScope.code).toBe('out_of_scope');
    expect(expectEnvelope(await reseller.client.put(`/x-users/${sibling.id}`, { Alias: 'x' }), 403)).toEqual(outOfScope);
    expect(expectEnvelope(await reseller.client.put('/x-users/1', { Alias: 'x' }), 403)).toEqual(outOfScope);
    // Without manage permission the question never gets that far.
    expect(expectEnvelope(await child.client.put(`/x-users/${reseller.id}`, { Alias: 'x' }), 403).code).toBe('manage_denied');
    expectEnvelope(await gw.root.put('/x-users/987654', { Alias: 'x' }), 404);
    expectEnvelope(await gw.root.put('/x-users/nobody@example.test', { Alias: 'x' }), 404);
    expect(await rowCounts(gw)).toEqual(before);
    // Its own Name again is no conflict.
    expect((await gw.root.put(`/x-users/${child.id}`, { Name: child.name })).status).toBe(200);
  });
});
