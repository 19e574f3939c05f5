import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../testing/gateway';
import { expectEnvelope } from '../../testing/http';
import { KEY_PATTERN } from '../../adapters/security/crypto';
import { accounts } from '../../adapters/storage/schema';
import { fresh, lastLog, make, rowCounts, type Made } from './test-support';

let gw: TestGateway;
beforeAll(async () => { gw = await startTestGateway(); });
afterAll(async () => { await gw?.close(); });

const DAY = 86_400_000;

describe('POST /x-users', () => {
  it('creates a direct child with its key shown once, its DNA path and a first credit card', async () => {
    const body = { ...fresh('alice'), CreditGranted: 25.1234567, Alias: 'Alice A.', BillingEmail: 'Bills@Example.test' };
    const before = await rowCounts(gw);
    const r = await gw.root.post('/x-users', { ...body, Email: body.Email.toUpperCase() });
    expect(r.status).toBe(201);
    expect(r.body.Action).toBe('add');
    const u = r.body.User;
    expect(u).toMatchObject({
      Name: body.Name, Email: body.Email.toLowerCase(), Alias: 'Alice A.', BillingEmail: 'bills@example.test', ParentID: 1, OwnerID: 1,
      Role: 'user', Rates: 1, Factor: 1, Level: 1, Status: true, Suspended: false, Balance: 25.123457, Children: 0,
    });
    expect(u.DNA).toBe(`.1.${u.ID}.`);
    expect(u.SecretKey).toMatch(KEY_PATTERN);
    expect(u.KeyHint).toBe(u.SecretKey.slice(-4));
    expect(u.CreditBalance).toHaveLength(1);
    const card = u.CreditBalance[0];
    expect(card).toMatchObject({ amount: 25.123457, balance: 25.123457, reference: 'granted by root (#1)' });
    // Days defaults to 180.
    expect(Date.parse(card.expires_at) - Date.parse(card.granted_at)).toBe(180 * DAY);
    expect(r.body.Transfer).toEqual({ Kind: 'grant', FromID: null, ToID: u.ID, Debited: 0, Credited: 25.123457 });

    const after = await rowCounts(gw);
    expect(after).toMatchObject({ accounts: before.accounts + 1, keys: before.keys + 1, cards: before.cards + 1, logs: before.logs + 1 });
    const log = await lastLog(gw);
    expect(log).toMatchObject({ action: 'add_user', target_id: u.ID, operator_id: 1 });
    expect(log.details).not.toContain(u.SecretKey);

    // The key works at once, and is never shown again nor logged.
    const status = await gw.as(u.SecretKey).get('/dashboard/status');
    expect(status.body).toMatchObject({ id: u.ID, dna: u.DNA, balance: 25.123457 });
    const listed = await gw.root.get(`/x-users/${u.ID}`);
    expect(listed.body[0].SecretKey).toBeUndefined();
    expect(listed.text).not.toContain(u.SecretKey);
    expect(gw.logs.join('\n')).not.toContain(u.SecretKey);
  });

  it('raises a CreditGranted below UserMinBalance to it and says so; a parent short of it is refused, never granted less', async () => {
    const r = await gw.root.post('/x-users', { ...fresh(), CreditGranted: 0.5 });
    expect(r.status).toBe(201);
    expect(r.body.Transfer).toMatchObject({ Kind: 'grant', Credited: 2, Requested: 0.5 });
    expect(r.body.User.Balance).toBe(2);
    expect(JSON.parse((await lastLog(gw)).details)).toMatchObject({ credit_granted: 2, credit_requested: 0.5 });
    const exact = await gw.root.post('/x-users', { ...fresh(), CreditGranted: 3 });
    expect(exact.body.Transfer.Requested).toBeUndefined();
    // A funded parent pays the minimum it was raised to.
    const parent = await make(gw, gw.root, { CreditGranted: 30 });
    const child = await parent.client.post('/x-users', { ...fresh(), CreditGranted: 0 });
    expect(child.body.Transfer).toMatchObject({ FromID: parent.id, Debited: 2, Credited: 2, Requested: 0 });
    expect((await gw.root.get(`/x-users/${parent.id}`)).body[0].Balance).toBeCloseTo(28, 9);
    const short = expectEnvelope(await parent.client.post('/x-users', { ...fresh(), CreditGranted: 50 }), 402);
    expect(short).toMatchObject({ code: 'insufficient_balance', message: expect.stringContaining('you have 28') });
  });

  it('takes Days as the validity of the first card', async () => {
    const r = await gw.root.post('/x-users', { ...fresh(), CreditGranted: 3, Days: 30 });
    const card = r.body.User.CreditBalance[0];
    expect(Date.parse(card.expires_at) - Date.parse(card.granted_at)).toBe(30 * DAY);
  });

  it('lets the child inherit ACL, limits, mappers, Level and Rates; sent values replace the inherited ones', async () => {
    const parent = await make(gw, gw.root, {
      CreditGranted: 100, Rates: 1.5, Level: 3, RPM: 60, TPD: 100_000, HardLimit: 50, SoftLimit: 40, DailyLimit: 5, UserLimit: 10, AutoQuota: true,
      AllowModels: 'gpt-4o* claude-*', AllowIPs: '10.0.0.0/8', AllowLevels: '1 3', Resources: '/v1/chat/completions /v1/embeddings',
      ModelMapper: 'fast=gpt-4o-mini', LevelMapper: 'gpt-4o*=3', ModelLimits: { 'gpt-4o': { rpm: 5, tpm: 1000 } },
    });
    const child = (await parent.client.post('/x-users', { ...fresh(), CreditGranted: 3 })).body.User;
    // AutoQuota (inherited) makes the caps follow the credit granted: HardLimit 3, SoftLimit 80% of it.
    expect(child).toMatchObject({
      ParentID: parent.id, DNA: `${parent.dna}${child.ID}.`, Rates: 1.5, Level: 3, RPM: 60, TPD: 100_000, HardLimit: 3, SoftLimit: 2.4,
      DailyLimit: 5, UserLimit: 10, AutoQuota: true, AllowModels: 'gpt-4o* claude-*', AllowIPs: '10.0.0.0/8', AllowLevels: '1 3',
      Resources: '/v1/chat/completions /v1/embeddings', ModelMapper: 'fast=gpt-4o-mini', LevelMapper: 'gpt-4o*=3', ModelLimits: { 'gpt-4o': { rpm: 5, tpm: 1000 } },
    });
    const narrower = (await parent.client.post('/x-users', {
      ...fresh(), CreditGranted: 3, RPM: 30, AllowModels: 'gpt-4o-mini', AllowIPs: '10.1.0.0/16 10.2.3.4', AllowLevels: '3',
      Resources: '/v1/chat/completions', ModelLimits: { 'claude-3': { rpm: 1 } }, Rates: 2,
    })).body.User;
    expect(narrower).toMatchObject({ RPM: 30, AllowModels: 'gpt-4o-mini', AllowIPs: '10.1.0.0/16 10.2.3.4', AllowLevels: '3', Resources: '/v1/chat/completions', ModelLimits: { 'claude-3': { rpm: 1 } }, Rates: 2 });
  });

  it('refuses a child wider than its funded parent: rate limits, ACLs and Rates', async () => {
    const parent = await make(gw, gw.root, { CreditGranted: 100, Rates: 1.5, RPM: 60, AllowModels: 'gpt-4o*', AllowIPs: '10.0.0.0/8', AllowLevels: '1 3', Resources: '/v1/chat/' });
    const before = await rowCounts(gw);
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ RPM: 61 }, /RPM: may not exceed the parent's RPM \(60\)/],
      [{ RPM: null }, /RPM/],
      [{ RPM: 0 }, /RPM/],
      [{ AllowModels: 'claude-3' }, /AllowModels: "claude-3" is not within/],
      [{ AllowModels: 'gpt-*' }, /AllowModels/],
      [{ AllowModels: '*' }, /AllowModels: cannot be unrestricted/],
      [{ AllowIPs: '11.0.0.1' }, /AllowIPs/],
      [{ AllowIPs: '10.0.0.0/7' }, /AllowIPs/],
      [{ AllowLevels: '2' }, /AllowLevels/],
      [{ Resources: '/v1/embeddings' }, /Resources/],
      [{ Rates: 1.2 }, /Rates: must be at least the parent's Rates \(1.5\)/],
    ];
    for (const [extra, message] of cases) {
      const e = expectEnvelope(await parent.client.post('/x-users', { ...fresh(), CreditGranted: 3, ...extra }), 400);
      expect(e.message, JSON.stringify(extra)).toMatch(message);
    }
    expect(await rowCounts(gw)).toEqual(before);
    const denyAll = await parent.client.post('/x-users', { ...fresh(), CreditGranted: 3, AllowModels: '-*', AllowIPs: '10.20.30.0/24' });
    expect(denyAll.status).toBe(201);
    expect(denyAll.body.User).toMatchObject({ AllowModels: '-*', AllowIPs: '10.20.30.0/24' });
  });

  it('answers bad input with a 400 envelope naming the field, and writes nothing', async () => {
    const before = await rowCounts(gw);
    const ok = () => ({ ...fresh(), CreditGranted: 5 });
    const cases: [unknown, RegExp][] = [
      [{ Email: 'x@example.test', CreditGranted: 5 }, /Name/],
      [{ Name: 'nobody1', CreditGranted: 5 }, /Email/],
      [{ Name: 'nobody1', Email: 'nobody1@example.test' }, /CreditGranted/],
      [{ ...ok(), Name: 'abc' }, /Name: must be 4 to 63/],
      [{ ...ok(), Name: 'x'.repeat(64) }, /Name: must be 4 to 63/],
      [{ ...ok(), Name: '12345' }, /Name: must contain a letter/],
      [{ ...ok(), Name: 'L123' }, /Name: looks like an L\/G\/R\/T\/F path filter/],
      [{ ...ok(), Name: 'has space' }, /Name: may hold only/],
      [{ ...ok(), Name: '.dotted' }, /Name/],
      [{ ...ok(), Name: 'at@sign' }, /Name/],
      [{ ...ok(), Name: 42 }, /Name/],
      [{ ...ok(), Email: 'not-an-email' }, /Email: must be a valid email/],
      [{ ...ok(), CreditGranted: '5' }, /CreditGranted/],
      [{ ...ok(), CreditGranted: -1 }, /CreditGranted/],
      [{ ...ok(), CreditGranted: 1e10 }, /CreditGranted/],
      [{ ...ok(), Days: 0 }, /Days/],
      [{ ...ok(), Days: 1.5 }, /Days/],
      [{ ...ok(), Days: 4000 }, /Days/],
      [{ ...ok(), Rates: 0 }, /Rates/],
      [{ ...ok(), RPM: -1 }, /RPM/],
      [{ ...ok(), RPM: 1.5 }, /RPM/],
      [{ ...ok(), HardLimit: -1 }, /HardLimit/],
      [{ ...ok(), HardLimit: 10, SoftLimit: 20 }, /SoftLimit: 20 exceeds HardLimit 10/],
      [{ ...ok(), Status: 'true' }, /Status/],
      [{ ...ok(), BillingEmail: 'nope' }, /BillingEmail/],
      [{ ...ok(), AllowIPs: '300.1.1.1' }, /AllowIPs: "300.1.1.1" is not an IP/],
      [{ ...ok(), AllowIPs: '10.0.0.0/33' }, /AllowIPs/],
      [{ ...ok(), AllowLevels: 'two' }, /AllowLevels/],
      [{ ...ok(), AllowModels: 'gpt 4o!' }, /AllowModels/],
      [{ ...ok(), Resources: 'v1/chat' }, /Resources/],
      [{ ...ok(), ModelMapper: 'no-equals' }, /ModelMapper/],
      [{ ...ok(), LevelMapper: 'gpt-4o=high' }, /LevelMapper/],
      [{ ...ok(), ModelLimits: { 'gpt-4o': { rpm: -1 } } }, /ModelLimits/],
      [{ ...ok(), ModelLimits: { 'gpt-4o': { rps: 1 } } }, /ModelLimits/],
      [{ ...ok(), ModelLimits: 'garbage' }, /ModelLimits/],
      [{ ...ok(), Role: 'admin' }, /Role/],
      [{ ...ok(), Role: 'owner' }, /Role: "owner" needs TENANCY=multi/],
      [{ ...ok(), Level: 1001 }, /Level/],
      [{ ...ok(), SecretKey: 'sk-Xvs' }, /unknown field: SecretKey/],
      [{ ...ok(), Extra: 1 }, /unknown field: Extra/],
      [[], /body/],
      ['text', /body/],
    ];
    for (const [body, message] of cases) {
      const e = expectEnvelope(await gw.root.post('/x-users', body), 400);
      expect(e.message, JSON.stringify(body)).toMatch(message);
    }
    expectEnvelope(await gw.root.request('POST', '/x-users', { raw: '{"Name":', headers: { 'content-type': 'application/json' } }), 400);
    expectEnvelope(await gw.root.request('POST', '/x-users', { raw: 'Name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } }), 415);
    expectEnvelope(await gw.root.request('POST', '/x-users', { raw: '' }), 400);
    const huge = JSON.stringify({ ...ok(), QRCode: 'x'.repeat(5 * 1024 * 1024) });
    expectEnvelope(await gw.root.request('POST', '/x-users', { raw: huge, headers: { 'content-type': 'application/json' } }), 413);
    expect(await rowCounts(gw)).toEqual(before);
  });

  it('answers 409 for a Name or Email already taken (Email in any case), and writes nothing', async () => {
    const first = await make(gw, gw.root);
    const before = await rowCounts(gw);
    const name = expectEnvelope(await gw.root.post('/x-users', { Name: first.name, Email: 'other@example.test', CreditGranted: 5 }), 409);
    expect(name).toMatchObject({ code: 'duplicate_name', type: 'conflict_error' });
    const email = expectEnvelope(await gw.root.post('/x-users', { ...fresh(), Email: first.email.toUpperCase(), CreditGranted: 5 }), 409);
    expect(email.code).toBe('duplicate_email');
    expectEnvelope(await gw.root.post('/x-users', { Name: 'root', Email: 'r@example.test', CreditGranted: 5 }), 409);
    expect(await rowCounts(gw)).toEqual(before);
  });

  it('creates exactly one account when the same Name is sent many times at once', async () => {
    const before = await rowCounts(gw);
    const { Name } = fresh('race');
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => gw.root.post('/x-users', { Name, Email: `${Name}.${i}@example.test`, CreditGranted: 5 })));
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    for (const r of results.filter((x) => x.status !== 201)) expect(expectEnvelope(r, 409).code).toBe('duplicate_name');
    const after = await rowCounts(gw);
    expect(after.accounts).toBe(before.accounts + 1);
    expect(after.logs).toBe(before.logs + 1);
  });

  it.skipIf(!process.env.TEST_DATABASE_URL)('answers 409 from the unique index when a concurrent insert wins after the explicit check (PostgreSQL only: needs two connections)', async () => {
    const { db } = gw.gateway.database;
    const { Name, Email } = fresh('index');
    let answer: Awaited<ReturnType<typeof gw.root.post>> | undefined;
    await db.transaction(async (tx) => {
      // Uncommitted: the request's explicit check cannot see it, its insert must wait on the index.
      await tx.insert(accounts).values({ name: Name, email: `held.${Email}`, dna: `.1.${process.pid}999.`, ownerId: 1, parentId: 1 });
      const pending = gw.root.post('/x-users', { Name, Email, CreditGranted: 5 }).then((r) => { answer = r; });
      let blocked = false;
      for (let i = 0; i < 100 && !blocked; i++) {
        const [w] = await gw.gateway.database.rows<{ n: number }>(sql`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`);
        blocked = w.n > 0;
        if (!blocked) await new Promise((r) => setTimeout(r, 50));
      }
      expect(blocked).toBe(true);
      expect(answer).toBeUndefined();
      void pending;
    });
    for (let i = 0; i < 100 && !answer; i++) await new Promise((r) => setTimeout(r, 50));
    expect(expectEnvelope(answer!, 409).code).toBe('duplicate_name');
  });

  it('lets only an Owner set Level, Role, Factor, LevelMapper, Gear and Tier', async () => {
    const manager = await make(gw, gw.root, { CreditGranted: 50 });
    const before = await rowCounts(gw);
    for (const field of [{ Level: 2 }, { Role: 'user' }, { Factor: 2 }, { LevelMapper: 'gpt-4o=2' }, { Gear: 1 }, { Tier: 1 }]) {
      const e = expectEnvelope(await manager.client.post('/x-users', { ...fresh(), CreditGranted: 3, ...field }), 403);
      expect(e.message).toMatch(new RegExp(`Only an Owner may set ${Object.keys(field)[0]}`));
    }
    expect(await rowCounts(gw)).toEqual(before);
    const byRoot = await gw.root.post('/x-users', { ...fresh(), CreditGranted: 3, Level: 2, Factor: 1.25, LevelMapper: 'gpt-4o=2', Gear: 4, Tier: 5, Role: 'user' });
    expect(byRoot.body.User).toMatchObject({ Level: 2, Factor: 1.25, LevelMapper: 'gpt-4o=2', Gear: 4, Tier: 5, Role: 'user' });
  });
});

describe('manage permission and funding by a non-Owner parent', () => {
  let reseller: Made;
  beforeAll(async () => { reseller = await make(gw, gw.root, { CreditGranted: 30, Rates: 1.2 }); });

  it('charges the parent CreditGranted / child Rates × its own Rates', async () => {
    const r = await reseller.client.post('/x-users', { ...fresh(), CreditGranted: 6, Rates: 2 });
    expect(r.status).toBe(201);
    expect(r.body.Transfer).toEqual({ Kind: 'grant', FromID: reseller.id, ToID: r.body.User.ID, Debited: 3.6, Credited: 6 });
    expect(r.body.User.CreditBalance[0].reference).toBe(`granted by ${reseller.name} (#${reseller.id})`);
    const status = await reseller.client.get('/dashboard/status');
    expect(status.body.balance).toBe(26.4);
  });

  it('answers 402 when the parent cannot pay, and writes nothing', async () => {
    const before = await rowCounts(gw);
    const e = expectEnvelope(await reseller.client.post('/x-users', { ...fresh(), CreditGranted: 40, Rates: 1.2 }), 402);
    expect(e).toMatchObject({ code: 'insufficient_balance', type: 'insufficient_balance_error' });
    expect(await rowCounts(gw)).toEqual(before);
  });

  it('refuses manage endpoints (403) below UserApiBalance, and /dashboard/status says so', async () => {
    const poor = await make(gw, gw.root, { CreditGranted: 19.99 });
    expect((await poor.client.get('/dashboard/status')).body).toMatchObject({ manage: false, admin: false, balance: 19.99, user_api_balance: 20, user_min_balance: 2 });
    const before = await rowCounts(gw);
    expect(expectEnvelope(await poor.client.post('/x-users', { ...fresh(), CreditGranted: 3 }), 403).code).toBe('manage_denied');
    for (const path of ['/x-users', '/x-dna', `/x-users/${poor.id}`, `/x-dna/${poor.id}`]) expectEnvelope(await poor.client.get(path), 403);
    expectEnvelope(await poor.client.put(`/x-users/${poor.id}`, { Alias: 'x' }), 403);
    expectEnvelope(await poor.client.delete(`/x-users/${poor.id}`), 403);
    expect(await rowCounts(gw)).toEqual(before);
    // A top-up past the threshold gives the permission at once.
    await gw.root.put(`/x-users/${poor.id}`, { CreditGranted: 0.01 });
    expect((await poor.client.get('/dashboard/status')).body.manage).toBe(true);
    expect((await poor.client.get('/x-users')).status).toBe(200);
  });

  it('stops at UserLimit subaccounts (403)', async () => {
    const limited = await make(gw, gw.root, { CreditGranted: 40, UserLimit: 1 });
    await make(gw, limited.client, { CreditGranted: 2 });
    const e = expectEnvelope(await limited.client.post('/x-users', { ...fresh(), CreditGranted: 2 }), 403);
    expect(e.message).toMatch(/UserLimit reached/);
  });

  it('never takes a parent below zero under many concurrent grants', async () => {
    const payer = await make(gw, gw.root, { CreditGranted: 21 });
    const results = await Promise.all(Array.from({ length: 16 }, () => payer.client.post('/x-users', { ...fresh('conc'), CreditGranted: 2 })));
    const created = results.filter((r) => r.status === 201).length;
    for (const r of results.filter((x) => x.status !== 201)) expect([402, 403]).toContain(r.status);
    // 10 grants of 2 fit in 21; a manager below 20 also loses manage permission on the way.
    expect(created).toBeGreaterThan(0);
    expect(created).toBeLessThanOrEqual(10);
    const left = (await gw.root.get(`/x-users/${payer.id}`)).body[0];
    expect(left.Balance).toBeCloseTo(21 - 2 * created, 9);
    expect(left.CreditBalance.every((c: any) => c.balance >= 0)).toBe(true);
    expect(left.Children).toBe(created);
  });
});
