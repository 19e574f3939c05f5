import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { freshDatabaseUrl } from '../testing/database';
import { startTestGateway, type TestGateway } from '../testing/gateway';
import { TcpRelay } from '../testing/tcp-relay';
import { needs, testRedisUrl } from '../testing/requirements';
import { hello, secret, startProxyFixture } from '../gateway/test-fixture';

const REDIS = new URL(testRedisUrl());

async function probe(url: string, path: string): Promise<{ status: number; body: Record<string, string> }> {
  const r = await fetch(`${url}${path}`);
  return { status: r.status, body: await r.json() };
}

/** Polls until `/readyz` answers `status` (a relay's cut reaches the drivers within a moment). */
async function readyzBecomes(url: string, status: number): Promise<{ status: number; body: Record<string, string> }> {
  let last = await probe(url, '/readyz');
  for (let i = 0; i < 100 && last.status !== status; i++) {
    await new Promise((r) => setTimeout(r, 100));
    last = await probe(url, '/readyz');
  }
  return last;
}

describe('GET /readyz beside /healthz', () => {
  let gw: TestGateway | undefined;
  const relays: TcpRelay[] = [];
  let drop: (() => Promise<void>) | undefined;

  afterEach(async () => {
    for (const r of relays) await r.up().catch(() => undefined);
    await gw?.close();
    gw = undefined;
    for (const r of relays.splice(0)) await r.down();
    await drop?.();
    drop = undefined;
  });

  it('ready on the embedded database; 503 stopping once shutdown began, while calls under way finish', async () => {
    const f = await startProxyFixture({ databaseUrl: 'memory://', shutdownGraceMs: 5_000 });
    try {
      expect(await probe(f.gw.url, '/readyz')).toEqual({ status: 200, body: { status: 'ready', database: 'ok' } });
      expect((await fetch(`${f.gw.url}/readyz`, { method: 'HEAD' })).status).toBe(200);
      const slow = secret('readyz-slow');
      await f.addKey(1, slow);
      f.mock.behave(slow, { delayMs: 1500 });
      const user = await f.account({ level: 1 });
      // Two kept-alive connections: the slow call takes one, the probe during shutdown the other
      // (the listener is closed by then, so only a kept connection can still ask).
      await Promise.all([probe(f.gw.url, '/readyz'), probe(f.gw.url, '/readyz')]);
      const call = f.gw.as(user.key).post('/v1/chat/completions', { model: 'gpt-4o-mini', messages: hello });
      await new Promise((r) => setTimeout(r, 200));
      const closing = f.gw.gateway.close();
      await new Promise((r) => setTimeout(r, 100));
      expect(await probe(f.gw.url, '/readyz')).toEqual({ status: 503, body: { status: 'stopping', database: 'ok' } });
      expect((await call).status).toBe(200);
      await closing;
    } finally {
      await f.close();
    }
  });

  it.runIf(process.env.TEST_DATABASE_URL)('503 while PostgreSQL cannot be reached, ready again when it returns; /healthz stays 200', async () => {
    const fresh = await freshDatabaseUrl();
    drop = fresh.drop;
    const via = await TcpRelay.before(fresh.url);
    relays.push(via.relay);
    gw = await startTestGateway({ databaseUrl: via.url });
    expect(await probe(gw.url, '/readyz')).toEqual({ status: 200, body: { status: 'ready', database: 'ok' } });

    await via.relay.down();
    const down = await readyzBecomes(gw.url, 503);
    expect(down).toEqual({ status: 503, body: { status: 'not_ready', database: 'unavailable' } });
    expect((await probe(gw.url, '/healthz')).status).toBe(200);
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(Number(/switchyard_database_errors_total\{operation="readiness"\} (\d+)/.exec(metrics)?.[1])).toBeGreaterThan(0);

    await via.relay.up();
    expect(await readyzBecomes(gw.url, 200)).toEqual({ status: 200, body: { status: 'ready', database: 'ok' } });
  }, 60_000);

  it.runIf(process.env.TEST_DATABASE_URL)('with REDIS_URL: 503 while Redis is away, ready when it is back', needs('redis', { timeout: 60_000 }), async () => {
    const redisRelay = new TcpRelay({ host: REDIS.hostname, port: Number(REDIS.port || 6379) });
    await redisRelay.up();
    relays.push(redisRelay);
    const fresh = await freshDatabaseUrl();
    drop = fresh.drop;
    gw = await startTestGateway({
      databaseUrl: fresh.url, redisUrl: `redis://127.0.0.1:${redisRelay.port}${REDIS.pathname}`, redisPrefix: `sy-readyz-${randomBytes(4).toString('hex')}:`,
    });
    expect(await readyzBecomes(gw.url, 200)).toEqual({ status: 200, body: { status: 'ready', database: 'ok', redis: 'ok' } });
    expect(await (await fetch(`${gw.url}/metrics`)).text()).toMatch(/^switchyard_redis_up 1$/m);

    await redisRelay.down();
    expect(await readyzBecomes(gw.url, 503)).toEqual({ status: 503, body: { status: 'not_ready', database: 'ok', redis: 'unavailable' } });
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).toMatch(/^switchyard_redis_up 0$/m);
    // Liveness: up, with the shared state degraded.
    expect(await probe(gw.url, '/healthz')).toEqual({ status: 200, body: { status: 'ok', sharedState: 'degraded' } });

    await redisRelay.up();
    expect(await readyzBecomes(gw.url, 200)).toEqual({ status: 200, body: { status: 'ready', database: 'ok', redis: 'ok' } });
  });
});
