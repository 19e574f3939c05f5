import { afterEach, describe, expect, it } from 'vitest';
import { freshDatabaseUrl } from '../../testing/database';
import { startTestGateway, type TestGateway } from '../../testing/gateway';
import { expectEnvelope } from '../../testing/http';
import { createAccount, rootAccount } from '../../testing/accounts';
import { isDatabaseUnavailable } from './errors';
import { TcpRelay } from '../../testing/tcp-relay';

describe('a database outage', () => {
  let gw: TestGateway | undefined;
  let relay: TcpRelay | undefined;
  let drop: (() => Promise<void>) | undefined;

  afterEach(async () => {
    await relay?.up().catch(() => undefined);
    await gw?.close();
    await relay?.down();
    await drop?.();
  });

  it('recognizes the errors of an unreachable database, and not those of a refused query', () => {
    const wrapped = (cause: unknown) => Object.assign(new Error('Failed query: select 1'), { cause });
    expect(isDatabaseUnavailable(wrapped(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })))).toBe(true);
    expect(isDatabaseUnavailable(wrapped(Object.assign(new Error('write CONNECTION_CLOSED'), { code: 'CONNECTION_CLOSED' })))).toBe(true);
    expect(isDatabaseUnavailable(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }))).toBe(true);
    expect(isDatabaseUnavailable(Object.assign(new Error('connection failure'), { code: '08006' }))).toBe(true);
    expect(isDatabaseUnavailable(wrapped(Object.assign(new Error('duplicate key'), { code: '23505' })))).toBe(false);
    expect(isDatabaseUnavailable(new Error('boom'))).toBe(false);
  });

  it.runIf(process.env.TEST_DATABASE_URL)('answers 503 database_unavailable on the admin API and the proxy, writes nothing, and recovers', async () => {
    const fresh = await freshDatabaseUrl();
    drop = fresh.drop;
    const via = await TcpRelay.before(fresh.url);
    relay = via.relay;
    gw = await startTestGateway({ databaseUrl: via.url });
    const newcomer = (await createAccount(gw, rootAccount(gw))).key;

    await relay.down();
    const created = await gw.root.post('/x-users', { Name: 'duringoutage', Email: 'during@example.com', CreditGranted: 5 });
    const e = expectEnvelope(created, 503);
    expect(e.code).toBe('database_unavailable');
    expect(created.headers.get('retry-after')).toBe('5');
    expectEnvelope(await gw.root.get('/x-keys'), 503);
    // The subaccount's key was never used, so the proxy has to read the database for it.
    const proxied = await gw.as(newcomer).post('/v1/chat/completions', { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    expect(expectEnvelope(proxied, 503).code).toBe('database_unavailable');
    expect(gw.logs.join('\n')).not.toContain(newcomer);

    await relay.up();
    await expect.poll(async () => (await gw!.root.get('/x-keys')).status, { timeout: 10_000 }).toBe(200);
    const users = await gw.root.get('/x-users');
    expect(users.status).toBe(200);
    expect(JSON.stringify(users.body)).not.toContain('during@example.com');
    await createAccount(gw, rootAccount(gw));
  });
});
