import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../testing/gateway';
import { expectEnvelope } from '../../testing/http';
import { createAccount, rootAccount, type TestAccount } from '../../testing/accounts';
import { recordOperation } from '../../state/oplog/oplog';
import type { Caller } from '../../../contract/services';

const SECRET = 'sk-proj-abcdefghijklmnopqrstuvwxyz0123456789';
let gw: TestGateway;
let ownerA: TestAccount;
let ownerB: TestAccount;
let user: TestAccount;
let grandchild: TestAccount;
let sibling: TestAccount;

const callerOf = (a: TestAccount): Caller => ({ id: a.id, name: a.name, ownerId: a.ownerId, dna: a.dna, role: 'user', isRoot: false, isOwner: false });
/** Bulk and failed entries no endpoint writes on demand, written as the services write theirs. */
const logAs = (who: Caller, action: string, targetId: number, status: 'success' | 'failure' = 'success') =>
  gw.gateway.database.db.transaction((tx) => recordOperation(tx, { caller: who, ip: '10.0.0.9' }, { action, targetId, details: { note: action }, status }));

beforeAll(async () => {
  gw = await startTestGateway({ tenancy: 'multi' });
  const root = rootAccount(gw);
  // Through the API, each writing its entry: Root adds two Owners, Owner A two accounts, one of them a child.
  ownerA = await createAccount(gw, root, { Role: 'owner' });
  ownerB = await createAccount(gw, root, { Role: 'owner' });
  user = await createAccount(gw, ownerA, { CreditGranted: 30 });
  sibling = await createAccount(gw, ownerA);
  grandchild = await createAccount(gw, user);
  // Each Owner changes its own provider keys (target: the Owner). A host of no known model family:
  // adding one of those deadlocks PGlite for an Owner created after start-up (the keys service
  // reads the Owner's config outside its transaction; reported).
  for (const key of [gw.rootKey, ownerA.key, ownerB.key]) {
    expect((await gw.as(key).post('/x-keys', { Provider: 'https://llm.example.com', SecretKey: SECRET })).status).toBe(201);
  }
  expect((await gw.as(ownerA.key).put(`/x-users/${user.id}`, { Alias: 'renamed' })).status).toBe(200);
  await logAs(callerOf(grandchild), 'rotate_self', grandchild.id, 'failure');
  for (let i = 0; i < 30; i++) await logAs(callerOf(sibling), 'rotate_self', sibling.id);
});
afterAll(async () => { await gw?.close(); });

const all = async (key: string) => {
  const out: any[] = [];
  for (let page = 1; ; page++) {
    const r = await gw.as(key).get(`/dashboard/logs?size=100&page=${page}`);
    expect(r.status).toBe(200);
    out.push(...r.body.logs);
    if (!r.body.has_more) return out;
  }
};
const summary = (logs: any[]) => logs.map((l) => `${l.operator_id}:${l.action}:${l.target_id}`);

describe('GET /dashboard/logs', () => {
  it('shows Root everything, newest first, with every field', async () => {
    const logs = await all(gw.rootKey);
    expect(logs).toHaveLength(5 + 3 + 1 + 1 + 30);
    expect(logs.map((l) => l.id)).toEqual([...logs.map((l) => l.id)].sort((a, b) => b - a));
    expect(Object.keys(logs[0]).sort()).toEqual(['action', 'created_at', 'details', 'id', 'ip', 'operator_id', 'status', 'target_id']);
    expect(logs.find((l) => l.action === 'add_key' && l.operator_id === ownerB.id)).toMatchObject({ target_id: ownerB.id, ip: '127.0.0.1', status: 'success' });
    expect(JSON.stringify(logs)).not.toContain(SECRET);
  });

  it('shows an Owner its tenant and what was done to it, not another tenant', async () => {
    const s = summary(await all(ownerA.key));
    expect(s).toContain(`1:add_user:${ownerA.id}`);
    expect(s).toContain(`${ownerA.id}:add_user:${user.id}`);
    expect(s).toContain(`${ownerA.id}:add_user:${sibling.id}`);
    expect(s).toContain(`${user.id}:add_user:${grandchild.id}`);
    expect(s).toContain(`${ownerA.id}:add_key:${ownerA.id}`);
    expect(s).toContain(`${ownerA.id}:update_user:${user.id}`);
    expect(s).toContain(`${grandchild.id}:rotate_self:${grandchild.id}`);
    expect(s.filter((x) => x.startsWith(`${sibling.id}:`))).toHaveLength(30);
    expect(s).toHaveLength(37);
    expect(s).not.toContain(`1:add_user:${ownerB.id}`);
    expect(s).not.toContain(`${ownerB.id}:add_key:${ownerB.id}`);
    expect(s).not.toContain('1:add_key:1');
    expect(summary(await all(ownerB.key)).sort()).toEqual([`1:add_user:${ownerB.id}`, `${ownerB.id}:add_key:${ownerB.id}`].sort());
  });

  it('shows an account what it and its descendants did and what targets them, never the Owner\'s key changes', async () => {
    expect(summary(await all(user.key)).sort()).toEqual([
      `${ownerA.id}:add_user:${user.id}`, `${ownerA.id}:update_user:${user.id}`, `${user.id}:add_user:${grandchild.id}`, `${grandchild.id}:rotate_self:${grandchild.id}`,
    ].sort());
    expect(summary(await all(grandchild.key)).sort()).toEqual([`${grandchild.id}:rotate_self:${grandchild.id}`, `${user.id}:add_user:${grandchild.id}`].sort());
  });

  it('pages by 24 by default, up to 100, with total and has_more', async () => {
    const first = await gw.as(ownerA.key).get('/dashboard/logs');
    expect(first.body).toMatchObject({ page: 1, size: 24, has_more: true });
    expect(first.body.logs).toHaveLength(24);
    const total = first.body.total;
    expect(total).toBe(37);
    const second = await gw.as(ownerA.key).get('/dashboard/logs?page=2');
    expect(second.body).toMatchObject({ page: 2, size: 24, total, has_more: false });
    expect(second.body.logs).toHaveLength(total - 24);
    expect(second.body.logs[0].id).toBeLessThan(first.body.logs[23].id);
    const sized = await gw.as(ownerA.key).get('/dashboard/logs?size=5');
    expect(sized.body).toMatchObject({ page: 1, size: 5, has_more: true });
    const beyond = await gw.as(ownerA.key).get('/dashboard/logs?page=99&size=100');
    expect(beyond.body).toMatchObject({ logs: [], total, has_more: false });
  });

  it('filters by action, target_id and status', async () => {
    const byAction = await gw.as(ownerA.key).get('/dashboard/logs?action=update_user');
    expect(byAction.body.total).toBe(1);
    expect(byAction.body.logs.every((l: any) => l.action === 'update_user')).toBe(true);
    const byTarget = await gw.as(ownerA.key).get(`/dashboard/logs?target_id=${user.id}`);
    expect(summary(byTarget.body.logs)).toEqual([`${ownerA.id}:update_user:${user.id}`, `${ownerA.id}:add_user:${user.id}`]);
    const failed = await gw.as(ownerA.key).get('/dashboard/logs?status=failure');
    expect(summary(failed.body.logs)).toEqual([`${grandchild.id}:rotate_self:${grandchild.id}`]);
    const combined = await gw.as(ownerA.key).get(`/dashboard/logs?action=rotate_self&status=success&target_id=${sibling.id}&size=10`);
    expect(combined.body).toMatchObject({ total: 30, size: 10, has_more: true });
    expect((await gw.as(user.key).get(`/dashboard/logs?target_id=${sibling.id}`)).body.total).toBe(0);
  });

  it('answers bad parameters with a 400 envelope', async () => {
    const u = gw.as(user.key);
    for (const q of ['size=0', 'size=101', 'size=abc', 'page=0', 'page=-1', 'page=1.5', 'page=abc', 'page=1000001', 'page=1e9', 'target_id=x', 'target_id=-1', 'target_id=2147483648', 'status=ok', 'action=', `action=${'a'.repeat(101)}`, 'unknown=1', 'size=1&size=2']) {
      const e = expectEnvelope(await u.get(`/dashboard/logs?${q}`), 400);
      expect(e.code, q).toBe('invalid_request');
    }
    expectEnvelope(await gw.as(null).get('/dashboard/logs'), 401);
    expect((await u.get('/dashboard/logs?page=1000000&size=100')).body).toMatchObject({ logs: [], page: 1000000, size: 100, has_more: false });
  });
});
