import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../testing/gateway';
import { expectEnvelope } from '../../testing/http';
import { createAccount, rootAccount, usageOf, type TestAccount } from '../../testing/accounts';

/**
 * Bills are answered from the same bytes for the same caller and URL within a second
 * (core/http/shared-answers.ts): what that may never change is who gets which bill, and that
 * this instance's written usage shows at once.
 */
let gw: TestGateway;
let team: TestAccount;
let member: TestAccount;

beforeAll(async () => {
  gw = await startTestGateway();
  team = await createAccount(gw, rootAccount(gw), { CreditGranted: 100 });
  member = await createAccount(gw, team, { CreditGranted: 10 });
  gw.gateway.usage.record(usageOf(member, { model: 'gpt-4o', prompt: 10, completion: 5, creditUsed: 1 }));
  gw.gateway.usage.record(usageOf(team, { model: 'gpt-4o', creditUsed: 0.5 }));
  await gw.gateway.usage.flush();
});
afterAll(async () => { await gw?.close(); });

const PATH = '/x-bill?days=30';

describe('shared bill answers', () => {
  it('give a caller the same bill again, and show this instance\'s newly written usage at once', async () => {
    const first = await gw.root.get(PATH);
    const again = await gw.root.get(PATH);
    expect(first.status).toBe(200);
    expect(again.text).toBe(first.text);
    expect(again.body.total_credit_used).toBeCloseTo(1.5, 9);
    gw.gateway.usage.record(usageOf(member, { model: 'gpt-4o', creditUsed: 2 }));
    await gw.gateway.usage.flush();
    expect((await gw.root.get(PATH)).body.total_credit_used).toBeCloseTo(3.5, 9);
  });

  it('never give one caller\'s bill to another asking the same URL at the same moment', async () => {
    const [root, mine] = await Promise.all([gw.root.get(PATH), gw.as(team.key).get(PATH)]);
    const ids = (bill: { usage_users: { id: number }[] }) => bill.usage_users.map((u) => u.id).sort((a, b) => a - b);
    expect(ids(root.body)).toEqual([team.id, member.id]);
    expect(mine.status).toBe(200);
    expect(ids(mine.body)).toEqual([member.id]);
    expect((await gw.as(member.key).get('/dashboard/bill?days=30')).body.total_credit_used).toBeCloseTo(3, 9);
    expect((await gw.as(team.key).get('/dashboard/bill?days=30')).body.total_credit_used).toBeCloseTo(0.5, 9);
  });

  it('authorize every call: a caller disabled a moment after its bill was shared is refused', async () => {
    expect((await gw.as(team.key).get(PATH)).status).toBe(200);
    expect((await gw.root.put(`/x-users/${team.id}`, { Status: false })).status).toBe(200);
    expectEnvelope(await gw.as(team.key).get(PATH), 401);
    expectEnvelope(await gw.as(null).get(PATH), 401);
  });

  it('keep no error answer, and answer HEAD with the head only', async () => {
    expectEnvelope(await gw.root.get('/x-bill?days=abc'), 400);
    expectEnvelope(await gw.root.get('/x-bill?days=abc'), 400);
    const head = await fetch(`${gw.url}${PATH}`, { method: 'HEAD', headers: { authorization: `Bearer ${gw.rootKey}` } });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    expect(Number(head.headers.get('content-length'))).toBe(Buffer.byteLength((await gw.root.get(PATH)).text));
  });
});
