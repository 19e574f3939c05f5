import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initTRPC } from '@trpc/server';
import type { RequestContext } from '../../../contract/trpc';
import type { Services } from '../../../contract/services';
import { listenExclusive, uWS } from './uws';
import { Exchange } from './exchange';
import { createTrpcHandler } from './trpc';
import { createLogger } from '../log';
import { httpFailureOf } from '../../adapters/storage/errors';
import { freshDatabaseUrl } from '../../testing/database';
import { startTestGateway, type TestGateway } from '../../testing/gateway';
import { TcpRelay } from '../../testing/tcp-relay';

/** An error as the database drivers throw them, wrapped as drizzle wraps them. */
const dbError = (code: string) => Object.assign(new Error('Failed query: insert into …'), { cause: Object.assign(new Error(`driver says ${code}`), { code }) });

describe('the tRPC endpoint on a bare uWS app', () => {
  const t = initTRPC.context<RequestContext>().create({ isDev: false });
  const appRouter = t.router({
    duplicate: t.procedure.mutation(() => { throw dbError('23505'); }),
    unreachable: t.procedure.query(() => { throw dbError('ECONNREFUSED'); }),
    broken: t.procedure.query(() => { throw new Error('a bug'); }),
    fine: t.procedure.query(() => 'ok'),
  });
  const logs: string[] = [];
  let listen: Awaited<ReturnType<typeof listenExclusive>>;
  let url: string;

  beforeAll(async () => {
    const app = uWS.App();
    const makeContext = (): RequestContext => ({ resHeaders: new Headers(), response: {}, ip: '', apiKey: null, services: {} as Services });
    const serve = createTrpcHandler(appRouter, makeContext, createLogger((l) => logs.push(l), 'debug'), httpFailureOf);
    app.any('/trpc/*', (res, req) => { void serve(new Exchange(res, req, 1024)); });
    listen = await listenExclusive(app, '127.0.0.1', 0);
    url = `http://127.0.0.1:${listen.port}`;
  });
  afterAll(() => uWS.us_listen_socket_close(listen.socket));

  it('answers a unique violation 409 and an unreachable database 503 with Retry-After, as the REST paths do', async () => {
    const dup = await fetch(`${url}/trpc/duplicate`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(dup.status).toBe(409);
    const dupBody = await dup.json();
    expect(dupBody.error.message).toBe('A record with the same unique value already exists');
    expect(dupBody.error.data).toMatchObject({ code: 'CONFLICT', httpStatus: 409 });

    const down = await fetch(`${url}/trpc/unreachable`);
    expect(down.status).toBe(503);
    expect(down.headers.get('retry-after')).toBe('5');
    expect((await down.json()).error.data).toMatchObject({ httpStatus: 503 });
    // Known failures are answers, not server errors to log.
    expect(logs.filter((l) => l.includes('trpc_failed'))).toEqual([]);
  });

  it('keeps any other failure a 500 that is logged, and maps each call of a batch on its own', async () => {
    const bug = await fetch(`${url}/trpc/broken`);
    expect(bug.status).toBe(500);
    expect((await bug.json()).error.message).toBe('Internal server error');
    expect(logs.filter((l) => l.includes('trpc_failed'))).toHaveLength(1);

    const batch = await fetch(`${url}/trpc/fine,unreachable?batch=1&input=${encodeURIComponent('{}')}`);
    const results = await batch.json();
    expect(results[0].result.data).toBe('ok');
    expect(results[1].error.data.httpStatus).toBe(503);
  });
});

describe.runIf(process.env.TEST_DATABASE_URL)('the gateway tRPC endpoint with its database away', () => {
  let gw: TestGateway | undefined;
  let relay: TcpRelay | undefined;
  let drop: (() => Promise<void>) | undefined;
  afterAll(async () => {
    await relay?.up().catch(() => undefined);
    await gw?.close();
    await relay?.down();
    await drop?.();
  });

  it('answers 503 database_unavailable, not 500', async () => {
    const fresh = await freshDatabaseUrl();
    drop = fresh.drop;
    const via = await TcpRelay.before(fresh.url);
    relay = via.relay;
    gw = await startTestGateway({ databaseUrl: via.url });
    await relay.down();
    const r = await fetch(`${gw.url}/trpc/keys.list`, { headers: { authorization: `Bearer ${gw.rootKey}` } });
    expect(r.status).toBe(503);
    expect(r.headers.get('retry-after')).toBe('5');
    expect((await r.json()).error.message).toBe('The database is unavailable; retry shortly');
  });
});
