import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../testing/gateway';
import { expectEnvelope } from '../../testing/http';
import { createAccount, rootAccount, usageOf, type TestAccount } from '../../testing/accounts';

const USER_INFO_FIELDS = [
  'object', 'id', 'name', 'email', 'alias', 'billing_email', 'dna', 'parent_id', 'owner_id', 'role', 'is_owner', 'level', 'gear', 'tier',
  'rates', 'factor', 'status', 'suspended', 'balance', 'credit_balance', 'daily_limit', 'hard_limit', 'soft_limit', 'user_limit',
  'auto_quota', 'rpm', 'rph', 'rpd', 'tpm', 'tph', 'tpd', 'resources', 'allow_ips', 'allow_models', 'allow_levels', 'model_mapper',
  'level_mapper', 'model_limits', 'created_at', 'updated_at',
].sort();

let gw: TestGateway;
let ownerA: TestAccount;
let ownerB: TestAccount;
let user: TestAccount;
let child: TestAccount;
let stranger: TestAccount;

beforeAll(async () => {
  gw = await startTestGateway({ tenancy: 'multi' });
  const root = rootAccount(gw);
  ownerA = await createAccount(gw, root, { Role: 'owner', CreditGranted: 100 });
  ownerB = await createAccount(gw, root, { Role: 'owner', CreditGranted: 100 });
  user = await createAccount(gw, ownerA, {
    CreditGranted: 30, Alias: 'The User', Level: 2, Rates: 1.5, RPM: 60, TPD: 100_000, HardLimit: 50, SoftLimit: 40,
    AllowModels: 'gpt-4o*', ModelMapper: 'fast=gpt-4o-mini', ModelLimits: { 'gpt-4o': { rpm: 5, tpm: 1000 } }, Resources: '/v1/chat/completions',
  });
  // The user pays for its child: 3 at the same Rates.
  child = await createAccount(gw, user, { CreditGranted: 3 });
  stranger = await createAccount(gw, ownerB, { CreditGranted: 5 });
});
afterAll(async () => { await gw?.close(); });

const utcToday = () => new Date().toISOString().slice(0, 10);

describe('GET /dashboard/info', () => {
  it('answers the flat user_info of the caller with every documented field', async () => {
    expect((await gw.as(ownerA.key).put(`/x-users/${user.id}`, { CreditGranted: 5, Days: 30 })).status).toBe(200);
    const r = await gw.as(user.key).get('/dashboard/info');
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(USER_INFO_FIELDS);
    expect(r.body).toMatchObject({
      object: 'user_info', id: user.id, name: user.name, email: user.email, alias: 'The User', dna: user.dna, parent_id: ownerA.id,
      owner_id: ownerA.id, role: 'user', is_owner: false, level: 2, rates: 1.5, status: true, suspended: false, balance: 32,
      daily_limit: null, hard_limit: 50, soft_limit: 40, rpm: 60, rph: null, tpd: 100_000, allow_models: 'gpt-4o*',
      model_mapper: 'fast=gpt-4o-mini', model_limits: { 'gpt-4o': { rpm: 5, tpm: 1000 } }, resources: '/v1/chat/completions',
    });
    // Earliest expiry first: the order credit is spent in.
    expect(r.body.credit_balance.map((c: any) => [c.amount, c.balance])).toEqual([[5, 5], [30, 27]]);
    expect(Date.parse(r.body.credit_balance[0].expires_at)).toBeGreaterThan(Date.now());
    expect(r.text).not.toContain(user.key);
  });

  it('subtracts usage not yet written from the balance, and loses none of it while the database refuses writes', async () => {
    const db = gw.gateway.database;
    const before = (await gw.as(child.key).get('/dashboard/info')).body;
    expect(before.balance).toBe(3);
    await db.rows(sql`alter table usage_records rename to usage_records_paused`);
    let restored = false;
    try {
      const failures = () => gw.logs.filter((l) => l.includes('usage_flush_failed')).length;
      const seen = failures();
      gw.gateway.usage.record(usageOf(child, { creditUsed: 2 }));
      const deadline = Date.now() + 5000;
      while (failures() === seen && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
      expect(failures()).toBeGreaterThan(seen);
      const during = (await gw.as(child.key).get('/dashboard/info')).body;
      expect(during.balance).toBe(1);
      expect(during.credit_balance[0].balance).toBe(3);
      await db.rows(sql`alter table usage_records_paused rename to usage_records`);
      restored = true;
      await gw.gateway.usage.flush();
    } finally {
      if (!restored) await db.rows(sql`alter table usage_records_paused rename to usage_records`);
    }
    const after = (await gw.as(child.key).get('/dashboard/info')).body;
    expect(after.balance).toBe(1);
    expect(after.credit_balance[0].balance).toBe(1);
    const [{ n }] = await db.rows<{ n: number }>(sql`select count(*)::int as n from usage_records where account_id = ${child.id}`);
    expect(n).toBe(1);
    expect(gw.logs.join('\n')).not.toContain(child.key);
  });

  it('rejects unknown query parameters and missing or bad keys with the envelope', async () => {
    expect(expectEnvelope(await gw.as(user.key).get('/dashboard/info?verbose=1'), 400).message).toMatch(/unknown field: verbose/);
    expectEnvelope(await gw.as(null).get('/dashboard/info'), 401);
    expectEnvelope(await gw.as('sk-Xvs' + 'x'.repeat(45)).get('/dashboard/info'), 401);
    expectEnvelope(await gw.as(user.key).post('/dashboard/info', {}), 404);
  });
});

describe('GET /dashboard/live', () => {
  it('adds today\'s and this month\'s usage (UTC), per model', async () => {
    const now = new Date();
    const sink = gw.gateway.usage;
    const a = await createAccount(gw, ownerA, { CreditGranted: 20 });
    sink.record(usageOf(a, { model: 'gpt-4o', prompt: 100, completion: 10, reasoning: 4, cached: 20, creditUsed: 0.5 }));
    sink.record(usageOf(a, { model: 'gpt-4o', prompt: 200, completion: 20, creditUsed: 0.25 }));
    sink.record(usageOf(a, { model: 'claude-sonnet-4-5', prompt: 1, completion: 2, creditUsed: 1 }));
    const previousMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 15));
    sink.record(usageOf(a, { model: 'gpt-4o', creditUsed: 7, at: previousMonth }));
    const earlierThisMonth = now.getUTCDate() > 1 ? new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1, 12)) : null;
    if (earlierThisMonth) sink.record(usageOf(a, { model: 'o3', prompt: 1000, completion: 1000, creditUsed: 3 }));
    if (earlierThisMonth) sink.record(usageOf(a, { model: 'o3', prompt: 1000, completion: 1000, creditUsed: 3, at: earlierThisMonth }));
    await sink.flush();

    const r = await gw.as(a.key).get('/dashboard/live');
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual([...USER_INFO_FIELDS, 'daily_usage', 'monthly_usage'].sort());
    const extra = earlierThisMonth ? 1 : 0;
    expect(r.body.daily_usage).toMatchObject({ Requests: 3 + extra, Prompt: 301 + 1000 * extra, Completion: 32 + 1000 * extra, Reasoning: 4, Cached: 20 });
    expect(r.body.daily_usage.CreditUsed).toBeCloseTo(1.75 + 3 * extra, 10);
    expect(r.body.daily_usage.ModelUsage['gpt-4o']).toEqual({ Requests: 2, Prompt: 300, Completion: 30, Reasoning: 4, Cached: 20, CreditUsed: 0.75 });
    expect(r.body.daily_usage.ModelUsage['claude-sonnet-4-5']).toMatchObject({ Requests: 1, CreditUsed: 1 });
    expect(r.body.monthly_usage.Requests).toBe(3 + 2 * extra);
    expect(r.body.monthly_usage.CreditUsed).toBeCloseTo(1.75 + 6 * extra, 10);
    expect(r.body.monthly_usage.ModelUsage['gpt-4o'].Requests).toBe(2);
    if (earlierThisMonth) expect(r.body.monthly_usage.ModelUsage.o3).toMatchObject({ Requests: 2, Prompt: 2000, CreditUsed: 6 });
    expect(r.body.balance).toBeCloseTo(20 - 7 - 1.75 - 6 * extra, 10);
  });

  it('shows an Owner its own usage, which is recorded but not charged', async () => {
    gw.gateway.usage.record(usageOf(ownerA, { creditUsed: 9 }));
    await gw.gateway.usage.flush();
    const r = await gw.as(ownerA.key).get('/dashboard/live');
    expect(r.body.daily_usage).toMatchObject({ Requests: 1, CreditUsed: 9 });
    expect(r.body.balance).toBe(100);
  });

  it('is empty for an account without usage, and rejects bad input', async () => {
    const r = await gw.as(ownerB.key).get('/dashboard/live');
    expect(r.body.daily_usage).toEqual({ Requests: 0, Prompt: 0, Completion: 0, Reasoning: 0, Cached: 0, CreditUsed: 0, ModelUsage: {} });
    expect(r.body.monthly_usage.ModelUsage).toEqual({});
    expectEnvelope(await gw.as(ownerB.key).get('/dashboard/live?day=' + utcToday()), 400);
    expectEnvelope(await gw.as(null).get('/dashboard/live'), 401);
  });
});

describe('cards on the polled reads', () => {
  it('leave out an expired card on /dashboard/live and /x-info, and show one that has not expired yet', async () => {
    const db = gw.gateway.database;
    const account = await createAccount(gw, ownerA, { CreditGranted: 4 });
    await db.rows(sql`insert into credit_grants (account_id, amount, balance, reference, expires_at) values
      (${account.id}, 7, 7, 'expired', now() - interval '1 minute'), (${account.id}, 9, 9, 'still good', now() + interval '1 minute')`);
    for (const r of [await gw.as(account.key).get('/dashboard/live'), await gw.as(ownerA.key).get(`/x-info?user=${account.id}`)]) {
      expect(r.status).toBe(200);
      expect(r.body.credit_balance.map((c: { reference: string; balance: number }) => c.balance).sort()).toEqual([4, 9]);
    }
  });
});

describe('GET /x-info', () => {
  it('answers an account of the Owner\'s tree by ID, name, email or DNA path, with usage', async () => {
    gw.gateway.usage.record(usageOf(child, { creditUsed: 0.5, model: 'gpt-4o-mini' }));
    await gw.gateway.usage.flush();
    const forms = [String(child.id), child.name, child.email.toUpperCase(), child.dna];
    for (const form of forms) {
      const r = await gw.as(ownerA.key).get(`/x-info?user=${encodeURIComponent(form)}`);
      expect(r.status, form).toBe(200);
      expect(r.body).toMatchObject({ object: 'user_info', id: child.id, dna: child.dna });
      expect(r.body.daily_usage.ModelUsage['gpt-4o-mini']).toMatchObject({ Requests: 1, CreditUsed: 0.5 });
      expect(r.body.monthly_usage.Requests).toBeGreaterThanOrEqual(1);
    }
    expect((await gw.as(ownerA.key).get(`/x-info?user=${ownerA.id}`)).body.id).toBe(ownerA.id);
    expect((await gw.root.get(`/x-info?user=${stranger.name}`)).body.id).toBe(stranger.id);
  });

  it('is 400 without user, 403 for a non-Owner, 404 for an unknown account or one outside the tree', async () => {
    const owner = gw.as(ownerA.key);
    expect(expectEnvelope(await owner.get('/x-info'), 400).message).toMatch(/user/);
    expectEnvelope(await owner.get('/x-info?user='), 400);
    expectEnvelope(await owner.get('/x-info?user=%20%20'), 400);
    expectEnvelope(await owner.get(`/x-info?user=${'x'.repeat(321)}`), 400);
    expectEnvelope(await owner.get(`/x-info?user=${child.id}&extra=1`), 400);
    expectEnvelope(await owner.get(`/x-info?user=${child.id}&user=${user.id}`), 400);
    expect(expectEnvelope(await owner.get(`/x-info?user=${stranger.id}`), 404).message).toBe(`Account #${stranger.id} not found`);
    expect(expectEnvelope(await owner.get(`/x-info?user=${ownerB.name}`), 404).message).toBe(`Account "${ownerB.name}" not found`);
    expectEnvelope(await owner.get('/x-info?user=1'), 404);
    expectEnvelope(await owner.get('/x-info?user=99999999'), 404);
    expectEnvelope(await owner.get('/x-info?user=99999999999999999999'), 404);
    expectEnvelope(await owner.get('/x-info?user=nobody-by-that-name'), 404);
    expectEnvelope(await owner.get('/x-info?user=.1.999999.'), 404);
    expect(expectEnvelope(await owner.get('/x-info?user=L2'), 400).message).toMatch(/^user: L2 is a filter/);
    expect(expectEnvelope(await owner.get('/x-info?user=.1.x.'), 400).message).toMatch(/^user: /);
    expectEnvelope(await gw.as(user.key).get(`/x-info?user=${child.id}`), 403);
    expectEnvelope(await gw.as(null).get(`/x-info?user=${child.id}`), 401);
  });
});
