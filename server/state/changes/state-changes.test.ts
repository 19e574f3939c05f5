import { afterEach, describe, expect, it } from 'vitest';
import postgres from 'postgres';
import { freshDatabaseUrl } from '../../testing/database';
import { startTestGateway, type TestGateway } from '../../testing/gateway';
import { startMockUpstream, type MockUpstream } from '../../testing/mock-upstream';
import { TcpRelay } from '../../testing/tcp-relay';
import { CHANGE_CHANNEL } from '../../adapters/storage/change-feed';
import { perInstanceLimitsWarning } from './instances';
import { planOf } from './state-changes';

describe('the per-instance limits warning', () => {
  it('says nothing for a lone instance or when the limits are shared', () => {
    expect(perInstanceLimitsWarning(0, false)).toBeNull();
    expect(perInstanceLimitsWarning(2, true)).toBeNull();
  });

  it('names the instances and every limit kept per instance', () => {
    const m = perInstanceLimitsWarning(2, false)!;
    expect(m).toMatch(/^3 Switchyard instances use this database and REDIS_URL is not set/);
    for (const limit of ['rate limits', 'credit reservations', 'spend caps', 'sleeping keys', 'switch-over windows']) expect(m).toContain(limit);
    expect(m).toContain('about 3×');
  });
});

describe('what a batch of changes asks of the snapshots', () => {
  it('each thing once, credit and account alike dropping the account', () => {
    const p = planOf([
      { k: 'account', id: 4 }, { k: 'credit', id: 4 }, { k: 'credit', id: 5 },
      { k: 'owner-config', owner: 2 }, { k: 'owner-config', owner: 2 },
      { k: 'provider-keys', owner: 2, wake: 11 }, { k: 'provider-keys', owner: 3 },
    ]);
    expect(p).toEqual({ allAccounts: false, accountIds: new Set([4, 5]), configOwners: new Set([2]), keyOwners: new Set([2, 3]), wake: new Set([11]) });
    expect(planOf([{ k: 'account', id: 4 }, { k: 'accounts' }]).allAccounts).toBe(true);
  });
});

describe.runIf(process.env.TEST_DATABASE_URL)('two gateways on one PostgreSQL database', () => {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const fn of cleanup.reverse()) await fn().catch(() => undefined);
    cleanup.length = 0;
  });

  async function pair(): Promise<{ a: TestGateway; b: TestGateway; relay: TcpRelay; url: string; mock: MockUpstream }> {
    const fresh = await freshDatabaseUrl();
    cleanup.push(fresh.drop);
    const mock = await startMockUpstream();
    cleanup.push(() => mock.close());
    const a = await startTestGateway({ databaseUrl: fresh.url });
    cleanup.push(() => a.close());
    // b reaches the database through a relay the test can cut.
    const via = await TcpRelay.before(fresh.url);
    cleanup.push(() => via.relay.down());
    const b = await startTestGateway({ databaseUrl: via.url, rootKey: a.rootKey });
    cleanup.push(() => b.close());
    // Runs first: b closes with its database reachable.
    cleanup.push(() => via.relay.up());
    return { a, b, relay: via.relay, url: fresh.url, mock };
  }

  const chat = (gw: TestGateway, key: string) => gw.as(key).post('/v1/chat/completions', { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });

  it('after missing notifications while its database was away, re-reads everything', async () => {
    const { a, b, relay, mock } = await pair();
    const user = (await a.root.post('/x-users', { Name: 'away', Email: 'away@example.test', CreditGranted: 50 })).body.User as { ID: number; SecretKey: string };
    // Cached on b: the account, and a key pool with no key.
    expect((await chat(b, user.SecretKey)).body.error.code).toBe('no_provider_key');

    await relay.down();
    await expect.poll(() => b.logs.some((l) => l.includes('"change_feed_lost"')), { timeout: 5000 }).toBe(true);
    // Made while b cannot hear: a suspension and a provider key.
    expect((await a.root.post('/x-keys', { Level: 1, Provider: mock.url, SecretKey: 'sk-missed-0123456789abcdef', Status: true })).status).toBe(201);
    expect((await a.root.put(`/x-users/${user.ID}`, { Suspended: true })).status).toBe(200);
    await relay.up();

    await expect.poll(async () => (await chat(b, user.SecretKey)).status, { timeout: 10_000, interval: 100 }).toBe(403);
    expect((await a.root.put(`/x-users/${user.ID}`, { Suspended: false })).status).toBe(200);
    await expect.poll(async () => (await chat(b, user.SecretKey)).status, { timeout: 1000, interval: 20 }).toBe(200);
    expect(mock.requests.at(-1)?.credential).toBe('sk-missed-0123456789abcdef');
    const warned = b.logs.map((l) => JSON.parse(l)).filter((l) => l.level === 'warn').map((l) => l.event);
    expect(warned).toContain('change_feed_resumed');
  }, 30_000);

  it('ignores notifications it cannot read, and keeps hearing the next ones', async () => {
    const { a, b, url } = await pair();
    const user = (await a.root.post('/x-users', { Name: 'noisy', Email: 'noisy@example.test', CreditGranted: 50 })).body.User as { ID: number; SecretKey: string };
    expect((await chat(b, user.SecretKey)).status).toBe(503);
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    cleanup.push(() => sql.end());
    await sql`select pg_notify(${CHANGE_CHANNEL}, 'not json')`;
    await sql`select pg_notify(${CHANGE_CHANNEL}, ${JSON.stringify({ from: 'elsewhere', changes: [{ k: 'account', id: '1 or 1=1' }, { k: 'nope' }, null] })})`;
    expect((await a.root.put(`/x-users/${user.ID}`, { Status: false })).status).toBe(200);
    await expect.poll(async () => (await chat(b, user.SecretKey)).status, { timeout: 1000, interval: 20 }).toBe(401);
    expect(b.logs.some((l) => l.includes('"change_feed_bad_payload"'))).toBe(true);
    expect(b.logs.some((l) => l.includes('"change_apply_failed"'))).toBe(false);
  });
});
