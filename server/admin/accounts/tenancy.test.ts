import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../testing/gateway';
import { expectEnvelope } from '../../testing/http';
import { fresh, make, rowCounts, type Made } from './test-support';

let gw: TestGateway;
let ownerA: Made;
let ownerB: Made;
let userA: Made;
let rootKeyId: number;

const SECRET = 'sk-proj-abcdefghijklmnopqrstuvwxyz0123456789';

beforeAll(async () => {
  gw = await startTestGateway({ tenancy: 'multi' });
  await gw.root.put('/x-config', { MODEL_MAPPER: 'gpt-4=gpt-4o' });
  await gw.root.put('/x-users/1', { ModelMapper: 'fast=gpt-4o-mini', AllowModels: 'gpt-4o*' });
  rootKeyId = (await gw.root.post('/x-keys', { Level: 1, Provider: 'https://api.openai.com', SecretKey: SECRET, Status: true })).body.Key.ID;
  ownerA = await make(gw, gw.root, { Role: 'owner', CreditGranted: 0 });
  ownerB = await make(gw, gw.root, { Role: 'owner', CreditGranted: 0 });
  userA = await make(gw, ownerA.client, { CreditGranted: 10 });
});
afterAll(async () => { await gw?.close(); });

/** Every route that names an account, asked about `ident`: the answers keyed by route. */
async function probeRoutes(client: Made['client'], ident: string) {
  const q = encodeURIComponent(ident);
  const answers: Record<string, unknown> = {};
  for (const [method, path, body] of [
    ['GET', '/x-users/{q}'], ['GET', '/x-dna/{q}'], ['PUT', '/x-users/{q}', { Alias: 'x' }], ['POST', '/x-users/{q}', { Suspended: true }],
    ['DELETE', '/x-users/{q}'], ['GET', '/x-info?user={q}'], ['GET', '/x-bill?user={q}'], ['GET', '/x-bill?u={q}&days=7'],
    ['GET', '/dashboard/requests?user={q}'], ['POST', '/x-news/{q}', { title: 't', content: 'c' }], ['DELETE', '/x-news/{q}'],
  ] as const) {
    const r = await client.request(method, path.replace('{q}', q), { body });
    answers[`${method} ${path}`] = { status: r.status, body: r.body };
  }
  return answers;
}

describe('Owners (TENANCY=multi)', () => {
  it('are Root\'s children that own their tenant and start from the defaults', async () => {
    const a = (await gw.root.get(`/x-users/${ownerA.id}`)).body[0];
    expect(a).toMatchObject({ Role: 'owner', OwnerID: ownerA.id, ParentID: 1, DNA: `.1.${ownerA.id}.`, ModelMapper: '', AllowModels: '', Balance: 0 });
    const u = (await ownerA.client.get(`/x-users/${userA.id}`)).body[0];
    expect(u).toMatchObject({ OwnerID: ownerA.id, DNA: `${ownerA.dna}${userA.id}.` });
    expect((await ownerA.client.get('/dashboard/status')).body).toMatchObject({ admin: true, manage: true, balance: 0 });
    // An Owner creates credit for its tenant: nothing is debited.
    const r = await ownerA.client.post('/x-users', { ...fresh(), CreditGranted: 500 });
    expect(r.body.Transfer).toMatchObject({ FromID: null, Debited: 0, Credited: 500 });
  });

  it('may be created by Root only', async () => {
    const before = await rowCounts(gw);
    expect(expectEnvelope(await ownerA.client.post('/x-users', { ...fresh(), CreditGranted: 0, Role: 'owner' }), 403).message).toMatch(/Only Root/);
    expectEnvelope(await userA.client.post('/x-users', { ...fresh(), CreditGranted: 2, Role: 'owner' }), 403);
    expect(await rowCounts(gw)).toEqual(before);
  });

  it('cannot see or touch another Owner\'s accounts (404, as if they did not exist)', async () => {
    const before = await rowCounts(gw);
    expect(await ownerB.client.get('/x-dna').then((r) => r.body)).toEqual([]);
    for (const path of [`/x-users/${userA.id}`, `/x-dna/${userA.name}`, `/x-dna/${ownerA.dna}`, `/x-users/${userA.email}`, `/x-users/${ownerA.id}`]) {
      expect(expectEnvelope(await ownerB.client.get(path), 404).code, path).toBe('not_found');
    }
    expect((await ownerB.client.get(`/x-dna?dna=${ownerA.dna}`)).body).toEqual([]);
    expect((await ownerB.client.get('/x-dna/R0')).body).toEqual([]);
    expectEnvelope(await ownerB.client.put(`/x-users/${userA.id}`, { Suspended: true }), 404);
    expectEnvelope(await ownerB.client.delete(`/x-users/${userA.id}`), 404);
    expectEnvelope(await ownerB.client.post(`/x-news/${userA.id}`, { title: 't', content: 'c' }), 404);
    expectEnvelope(await ownerA.client.put(`/x-users/${ownerB.id}`, { Alias: 'x' }), 404);
    expect(await rowCounts(gw)).toEqual(before);
  });

  it('cannot tell another tenant\'s account from none: the same status and body on every route that takes an account', async () => {
    const { Name, Email } = fresh('probe');
    const probe = (ident: string) => probeRoutes(ownerB.client, ident);
    const none = { name: await probe(Name), email: await probe(Email) };
    const victim = await make(gw, ownerA.client, { Name, Email });
    const before = await rowCounts(gw);
    expect({ name: await probe(Name), email: await probe(Email) }).toEqual(none);
    expect(Object.values(none.name)).toContainEqual({ status: 404, body: { error: { message: `Account "${Name}" not found`, type: 'not_found_error', code: 'not_found' } } });
    for (const answer of [...Object.values(none.name), ...Object.values(none.email)]) expect(answer).toMatchObject({ status: 404, body: { error: { code: 'not_found' } } });
    // IDs and DNA paths: the answer for an ID or path nobody has, the number aside.
    const unused = 2_000_000_000;
    const same = (answers: Record<string, unknown>, from: string) => JSON.stringify(Object.values(answers)).replaceAll(from, 'N');
    expect(same(await probe(String(victim.id)), String(victim.id))).toBe(same(await probe(String(unused)), String(unused)));
    expect(same(await probe(victim.dna), victim.dna)).toBe(same(await probe(`${ownerA.dna}${unused}.`), `${ownerA.dna}${unused}.`));
    expect(await rowCounts(gw)).toEqual(before);
    // The victim is untouched and its own Owner and Root still see it.
    expect((await ownerA.client.get(`/x-users/${Name}`)).body[0]).toMatchObject({ ID: victim.id, Alias: Name, Suspended: false });
    expect((await gw.root.get(`/x-users/${Email}`)).body[0].ID).toBe(victim.id);
  });

  it('answer a subaccount out of scope beyond its subtree: one 403 for a sibling, its Owner, Root, another tenant\'s account and none', async () => {
    const manager = await make(gw, ownerA.client, { CreditGranted: 50 });
    const below = await make(gw, manager.client, { CreditGranted: 2 });
    const stranger = await make(gw, ownerB.client, { CreditGranted: 2 });
    const before = await rowCounts(gw);
    const unknown = await probeRoutes(manager.client, '2000000000');
    for (const [route, answer] of Object.entries(unknown)) {
      const code = route.includes('/x-info') ? 'owner_only' : 'out_of_scope';
      expect(answer, route).toMatchObject({ status: 403, body: { error: { type: 'permission_error', code } } });
    }
    const targets = [
      userA.id, userA.name, userA.email, userA.dna, ownerA.id, ownerA.name, ownerA.email, ownerA.dna, '1', 'root', '.1.',
      stranger.id, stranger.name, stranger.email, stranger.dna, ownerB.id, ownerB.dna, 'nobody-at-all', 'nobody@example.test', '.1.2000000000.',
    ];
    for (const target of targets) expect(await probeRoutes(manager.client, String(target)), String(target)).toEqual(unknown);
    expect(await rowCounts(gw)).toEqual(before);
    // Its own subtree it reaches; a DNA path below it that nobody holds names nothing hidden: 404.
    expect((await manager.client.get(`/x-users/${below.id}`)).body.map((a: any) => a.ID)).toEqual([below.id]);
    expect((await manager.client.put(`/x-users/${below.name}`, { Alias: 'seen' })).status).toBe(200);
    expect(expectEnvelope(await manager.client.get(`/x-dna/${manager.dna}2000000000.`), 404).code).toBe('not_found');
  });

  it('leave Root every tenant: it reaches any account, and one that does not exist is 404', async () => {
    expect((await gw.root.get(`/x-users/${userA.id}`)).body.map((a: any) => a.ID)).toEqual([userA.id]);
    expect((await gw.root.get(`/x-info?user=${userA.id}`)).body.id).toBe(userA.id);
    expect((await gw.root.get(`/dashboard/requests?user=${userA.id}`)).status).toBe(200);
    const before = await rowCounts(gw);
    for (const [route, answer] of Object.entries(await probeRoutes(gw.root, '2000000000'))) {
      expect(answer, route).toMatchObject({ status: 404, body: { error: { type: 'not_found_error', code: 'not_found', message: 'Account #2000000000 not found' } } });
    }
    expect(await rowCounts(gw)).toEqual(before);
  });

  it('have names and emails of their own: unique per tenant, found in the caller\'s tenant only', async () => {
    const taken = await make(gw, ownerA.client);
    // Colliding only with another tenant's account is no collision.
    const twin = await make(gw, ownerB.client, { Name: taken.name, Email: taken.email.toUpperCase() });
    expect(twin.email).toBe(taken.email);
    expect((await ownerA.client.get(`/x-users/${taken.name}`)).body.map((a: any) => a.ID)).toEqual([taken.id]);
    expect((await ownerB.client.get(`/x-users/${taken.email}`)).body.map((a: any) => a.ID)).toEqual([twin.id]);
    expect((await twin.client.get('/dashboard/status')).body).toMatchObject({ id: twin.id, name: taken.name });
    // Inside one tenant they stay unique, on create and on rename.
    expect(expectEnvelope(await ownerB.client.post('/x-users', { ...fresh(), Name: taken.name, CreditGranted: 5 }), 409).code).toBe('duplicate_name');
    expect(expectEnvelope(await ownerB.client.post('/x-users', { ...fresh(), Email: taken.email, CreditGranted: 5 }), 409).code).toBe('duplicate_email');
    const other = await make(gw, ownerB.client);
    expect(expectEnvelope(await ownerB.client.put(`/x-users/${other.id}`, { Name: taken.name }), 409).code).toBe('duplicate_name');
    // Renaming into another tenant's name is fine.
    const renamed = await ownerA.client.put(`/x-users/${taken.id}`, { Name: other.name, Email: other.email });
    expect(renamed.status, renamed.text).toBe(200);
    // Root sees every tenant: a shared name is ambiguous there, so it lists them; the ID always works.
    const e = expectEnvelope(await gw.root.get(`/x-users/${other.name}`), 400);
    expect(e.code).toBe('ambiguous_identifier');
    expect(e.message).toContain(`#${taken.id} ${taken.dna}`);
    expect(e.message).toContain(`#${other.id} ${other.dna}`);
    expect(expectEnvelope(await gw.root.get(`/x-bill?user=${other.email}`), 400).message).toMatch(/^user: /);
    expect((await gw.root.get(`/x-users/${other.id}`)).body[0].ID).toBe(other.id);
    expect((await gw.root.get(`/x-users/${userA.name}`)).body[0].ID).toBe(userA.id);
  });

  it('keep names unique when Root moves a subtree into a tenant', async () => {
    const owner = await make(gw, gw.root, { Role: 'owner', CreditGranted: 0 });
    const rootUser = await make(gw, gw.root);
    const inside = await make(gw, owner.client, { Name: rootUser.name });
    const e = expectEnvelope(await gw.root.put(`/x-users/${owner.id}`, { Role: 'user' }), 409);
    expect(e.code).toBe('duplicate_name');
    expect(e.message).toContain(`account #${inside.id}`);
    expect((await gw.root.get(`/x-users/${owner.id}`)).body[0]).toMatchObject({ Role: 'owner', OwnerID: owner.id });
    await owner.client.put(`/x-users/${inside.id}`, { Name: `${rootUser.name}x` });
    expect((await gw.root.put(`/x-users/${owner.id}`, { Role: 'user' })).body.User).toMatchObject({ Role: 'user', OwnerID: 1 });
  });

  it('see only their own provider keys and configuration', async () => {
    const keys = await ownerB.client.get('/x-keys');
    expect(keys.status).toBe(200);
    expect(keys.body).toEqual([]);
    expect(keys.headers.get('x-total-count')).toBe('0');
    expectEnvelope(await ownerB.client.get(`/x-keys/${rootKeyId}`), 404);
    const config = await ownerB.client.get('/x-config');
    expect(config.body.oid).toBe(ownerB.id);
    expect(Object.values(config.body.configs).every((v) => v === '')).toBe(true);
    expect((await gw.root.get('/x-config')).body.configs.MODEL_MAPPER).toBe('gpt-4=gpt-4o');
    const before = await rowCounts(gw);
    expectEnvelope(await ownerB.client.delete(`/x-keys/${rootKeyId}`), 404);
    expect(await rowCounts(gw)).toEqual(before);
    expect((await gw.root.get(`/x-keys/${rootKeyId}`)).body).toHaveLength(1);
    // And a user of a tenant is no Owner at all.
    expectEnvelope(await userA.client.get('/x-keys'), 403);
  });

  it('get their own LEVEL_MAPPER completed when they add a standard provider key', async () => {
    const before = (await gw.root.get('/x-config')).body.configs.LEVEL_MAPPER;
    const r = await ownerB.client.post('/x-keys', { Level: 3, Provider: 'https://api.anthropic.com', SecretKey: SECRET, Status: true });
    expect(r.status).toBe(201);
    expect(r.body.LevelMapper).toBe('claude-*=3');
    expect((await ownerB.client.get('/x-conf')).body.LevelMapper).toEqual({ 'claude-*': 3 });
    expect((await gw.root.get('/x-config')).body.configs.LEVEL_MAPPER).toBe(before);
    expect((await ownerB.client.delete(`/x-keys/${r.body.Key.ID}`)).status).toBe(200);
  });

  it('move a subtree between tenants on promotion and demotion (Root only, direct children only)', async () => {
    const reseller = await make(gw, gw.root, { CreditGranted: 50 });
    const below = await make(gw, reseller.client, { CreditGranted: 3 });
    expectEnvelope(await gw.root.put(`/x-users/${below.id}`, { Role: 'owner' }), 400);
    expectEnvelope(await ownerA.client.put(`/x-users/${userA.id}`, { Role: 'owner' }), 403);
    const promoted = await gw.root.put(`/x-users/${reseller.id}`, { Role: 'owner' });
    expect(promoted.body.User).toMatchObject({ Role: 'owner', OwnerID: reseller.id });
    expect((await gw.root.get(`/x-users/${below.id}`)).body[0].OwnerID).toBe(reseller.id);
    // The caches follow at once: the new Owner reaches Owner endpoints with its tenant.
    expect((await reseller.client.get('/x-config')).body.oid).toBe(reseller.id);

    await reseller.client.post('/x-keys', { Level: 1, Provider: 'https://api.example.com', SecretKey: SECRET });
    expect(expectEnvelope(await gw.root.put(`/x-users/${reseller.id}`, { Role: 'user' }), 409).code).toBe('owner_has_configuration');
    const keyId = (await reseller.client.get('/x-keys')).body[0].ID;
    await reseller.client.delete(`/x-keys/${keyId}`);
    const demoted = await gw.root.put(`/x-users/${reseller.id}`, { Role: 'user' });
    expect(demoted.body.User).toMatchObject({ Role: 'user', OwnerID: 1 });
    expect((await gw.root.get(`/x-users/${below.id}`)).body[0].OwnerID).toBe(1);
    expectEnvelope(await reseller.client.get('/x-config'), 403);
  });

  it('are deleted with their provider keys and configuration once they have no accounts', async () => {
    const owner = await make(gw, gw.root, { Role: 'owner', CreditGranted: 0 });
    const sub = await make(gw, owner.client, { CreditGranted: 2 });
    await owner.client.post('/x-keys', { Level: 1, Provider: 'https://api.example.com', SecretKey: SECRET });
    await owner.client.put('/x-config', { MODEL_MAPPER: 'a=b' });
    expectEnvelope(await gw.root.delete(`/x-users/${owner.id}`), 409);
    await owner.client.delete(`/x-users/${sub.id}`);
    const before = await rowCounts(gw);
    expect((await gw.root.delete(`/x-users/${owner.id}`)).status).toBe(200);
    expect((await rowCounts(gw)).accounts).toBe(before.accounts - 1);
    const left = await gw.gateway.database.rows<{ n: number }>(
      sql`select (select count(*) from provider_keys where owner_id = ${owner.id}) + (select count(*) from owner_configs where owner_id = ${owner.id}) as n`);
    expect(Number(left[0].n)).toBe(0);
  });
});

describe('TENANCY=single', () => {
  it('refuses the owner Role on create and update (Root is the one Owner)', async () => {
    const single = await startTestGateway();
    try {
      expect(expectEnvelope(await single.root.post('/x-users', { ...fresh(), CreditGranted: 2, Role: 'owner' }), 400).code).toBe('single_tenancy');
      const u = await make(single, single.root);
      expect(expectEnvelope(await single.root.put(`/x-users/${u.id}`, { Role: 'owner' }), 400).code).toBe('single_tenancy');
    } finally {
      await single.close();
    }
  });
});
