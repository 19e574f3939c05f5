import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { secret } from '../test-fixture';
import { TcpRelay } from '../../testing/tcp-relay';
import { refusedOrigin, UNRESOLVABLE_ORIGIN } from '../../testing/mock-upstream';
import { hello, leaks, sleep, startFaults, timed, type Faults } from './test-support';

/**
 * Failover when upstreams fail, against the mock upstream over loopback with the real SDKs.
 * Timeouts are scaled down (test-support FAULT_SETTINGS): key cool-down 0.4 s (KEY_OPEN_MS,
 * 15 s by default), failure threshold 2 (3 by default), failover budget 2 s.
 */
let x: Faults;
beforeAll(async () => {
  x = await startFaults();
}, 60_000);
afterAll(() => x?.close());

const ok = async (key: string, model = 'gpt-4o') => {
  try {
    const r = await x.openai(key).chat.completions.create({ model, messages: hello });
    return { status: 200, model: r.model };
  } catch (e: any) {
    return { status: e.status ?? 0, error: e };
  }
};

describe('fault suite: failover', () => {
  it('one healthy and three unreachable keys: after the first failures all 50 requests get 200, the three show open in /x-conf and at warn in the log', async () => {
    const good = secret('healthy');
    const dead = [secret('dns-1'), secret('dns-2'), secret('refused')];
    const ids = [
      await x.addKey(10, dead[0], UNRESOLVABLE_ORIGIN),
      await x.addKey(10, dead[1], 'https://api.second-unreachable.invalid'),
      await x.addKey(10, dead[2], await refusedOrigin()),
    ];
    await x.addKey(10, good);
    const user = await x.f.account({ level: 10 });
    const statuses: number[] = [];
    for (let i = 0; i < 50; i++) statuses.push((await ok(user.key)).status);
    expect(statuses).toEqual(new Array(50).fill(200));
    expect(x.callsWith(good)).toBe(50);
    const health = await x.health(ids);
    expect(health.map((h) => [h.ID, h.Model, h.State])).toEqual(ids.map((id) => [id, null, 'open']));
    for (const h of health) {
      // EAI_AGAIN where no DNS server answers at all (a machine or namespace without a network).
      expect(h.LastError).toMatch(/ENOTFOUND|EAI_AGAIN|ECONNREFUSED/);
      expect(h.LastError).not.toMatch(/invalid|127\.0\.0\.1/);
      expect(Date.parse(h.Until)).toBeGreaterThan(Date.now());
    }
    const opened = x.logged('provider_key_opened').filter((l) => ids.includes(l.key));
    expect(new Set(opened.map((l) => l.key))).toEqual(new Set(ids));
    expect(opened.every((l) => l.level === 'warn' && l.key_level === 10)).toBe(true);
    expect(JSON.stringify(opened)).not.toMatch(/invalid|127\.0\.0\.1/);
    // Without circuits every request would have tried the dead keys (150 failures); the
    // threshold and the probes after each cool-down are all they got.
    const failures = x.logged('upstream_attempt_failed').filter((l) => ids.includes(l.key));
    expect(failures.length).toBeLessThan(20);
  }, 30_000);

  it('an unreachable upstream that comes back returns to rotation by itself: probed after its cool-down, closed at warn', async () => {
    const relay = new TcpRelay({ host: '127.0.0.1', port: Number(new URL(x.f.mock.url).port) });
    await relay.up();
    const origin = `http://127.0.0.1:${relay.port}`;
    await relay.down();
    const away = secret('comes-back');
    const other = secret('steady');
    const awayId = await x.addKey(11, away, origin);
    await x.addKey(11, other);
    const user = await x.f.account({ level: 11 });
    for (let i = 0; i < 4; i++) expect((await ok(user.key)).status).toBe(200);
    expect((await x.health([awayId]))[0]).toMatchObject({ State: 'open', Model: null });
    await relay.up();
    try {
      const from = x.f.mock.requests.length;
      const until = Date.now() + 5000;
      while (x.callsWith(away, from) === 0 && Date.now() < until) {
        expect((await ok(user.key)).status).toBe(200);
        await sleep(50);
      }
      expect(x.callsWith(away, from)).toBeGreaterThan(0);
      expect((await x.health([awayId]))[0]).toMatchObject({ State: 'healthy', Failures: 0 });
      expect(x.logged('provider_key_closed').filter((l) => l.key === awayId).map((l) => l.level)).toEqual(['warn']);
      // Back in the round robin: both keys serve again.
      const before = x.f.mock.requests.length;
      for (let i = 0; i < 4; i++) expect((await ok(user.key)).status).toBe(200);
      expect(x.callsWith(away, before)).toBe(2);
    } finally {
      await relay.down();
    }
  }, 30_000);

  it('429 with Retry-After (or retry-after-ms) puts the key to sleep that long, the next key serves meanwhile, and its circuit stays closed', async () => {
    const a = secret('429-a');
    const b = secret('429-b');
    const aId = await x.addKey(12, a);
    await x.addKey(12, b);
    const user = await x.f.account({ level: 12 });
    x.f.mock.behave(a, { retryAfter: 1, times: 1 });
    const t0 = Date.now();
    expect((await ok(user.key)).status).toBe(200);
    const sleeping = (await x.f.gw.root.get('/x-conf')).body.SleepingKeys.find((k: any) => k.ID === aId);
    expect(Date.parse(sleeping.Until) - t0).toBeGreaterThanOrEqual(900);
    expect(Date.parse(sleeping.Until) - t0).toBeLessThan(1600);
    let from = x.f.mock.requests.length;
    for (let i = 0; i < 3; i++) expect((await ok(user.key)).status).toBe(200);
    expect(x.callsWith(a, from)).toBe(0);
    await sleep(Math.max(0, Date.parse(sleeping.Until) - Date.now() + 50));
    from = x.f.mock.requests.length;
    for (let i = 0; i < 2; i++) expect((await ok(user.key)).status).toBe(200);
    expect(x.callsWith(a, from)).toBe(1);

    x.f.mock.behave(a, { retryAfterMs: 700, times: 1 });
    const t1 = Date.now();
    for (let i = 0; i < 2; i++) expect((await ok(user.key)).status).toBe(200);
    const again = (await x.f.gw.root.get('/x-conf')).body.SleepingKeys.find((k: any) => k.ID === aId);
    expect(Date.parse(again.Until) - t1).toBeGreaterThanOrEqual(650);
    expect(Date.parse(again.Until) - t1).toBeLessThan(1200);
    expect(await x.health([aId])).toEqual([]);
  }, 30_000);

  it('a persistent 503 fails over to the next key within the time budget, and takes that model on that key out of rotation', async () => {
    const bad = secret('503');
    const good = secret('503-good');
    const badId = await x.addKey(13, bad);
    await x.addKey(13, good);
    const user = await x.f.account({ level: 13 });
    x.f.mock.behave(bad, { status: 503 });
    for (let i = 0; i < 8; i++) {
      const [r, ms] = await timed(() => ok(user.key));
      expect(r.status).toBe(200);
      expect(ms).toBeLessThan(2000);
    }
    // Threshold 2, then only probes after each (doubling) cool-down.
    expect(x.callsWith(bad)).toBeLessThanOrEqual(3);
    const [entry] = await x.health([badId]);
    expect(entry).toMatchObject({ Model: 'gpt-4o', State: 'open', LastError: 'upstream answered 503' });
  }, 30_000);

  it('slow 503s on every key stop at FAILOVER_BUDGET_MS (2 s here) with 502 upstream_error, not after every key', async () => {
    const keys = Array.from({ length: 6 }, (_, i) => secret(`slow-${i}`));
    for (const k of keys) {
      await x.addKey(14, k);
      x.f.mock.behave(k, { status: 503, delayMs: 600 });
    }
    const user = await x.f.account({ level: 14 });
    const from = x.f.mock.requests.length;
    const [r, ms] = await timed(() => x.post(user.key, '/v1/chat/completions', { model: 'gpt-4o', messages: hello }));
    expect(r.status).toBe(502);
    expect(r.json.error).toMatchObject({ code: 'upstream_error', type: 'server_error', request_id: r.headers.get('x-request-id') });
    const tried = keys.reduce((n, k) => n + x.callsWith(k, from), 0);
    expect(tried).toBeGreaterThanOrEqual(3);
    expect(tried).toBeLessThanOrEqual(4);
    expect(ms).toBeLessThan(3200);
    const line = x.logged('upstream_failed').find((l) => l.request === r.json.error.request_id);
    expect(line).toMatchObject({ level: 'warn', code: 'upstream_error', budget_spent: true });
    expect(line.causes).toHaveLength(tried);
  }, 30_000);

  it('a primary that flaps for 60 s (scaled to 1.5 s) is taken out while it fails, probed, and returns to rotation; every request is served', async () => {
    const primary = secret('flap');
    const backup = secret('flap-backup');
    const primaryId = await x.addKey(15, primary);
    await x.addKey(15, backup);
    const user = await x.f.account({ level: 15 });
    const end = Date.now() + 1500;
    x.f.mock.behave(primary, { status: 502, flapMs: 300, activeUntil: end });
    while (Date.now() < end) {
      expect((await ok(user.key)).status).toBe(200);
      await sleep(20);
    }
    expect(x.logged('provider_key_opened').some((l) => l.key === primaryId)).toBe(true);
    const from = x.f.mock.requests.length;
    const until = Date.now() + 5000;
    while (Date.now() < until && (await x.health([primaryId]))[0]?.State !== 'healthy') {
      expect((await ok(user.key)).status).toBe(200);
      await sleep(50);
    }
    expect((await x.health([primaryId]))[0]).toMatchObject({ State: 'healthy' });
    expect(x.logged('provider_key_closed').some((l) => l.key === primaryId)).toBe(true);
    const before = x.f.mock.requests.length;
    for (let i = 0; i < 4; i++) expect((await ok(user.key)).status).toBe(200);
    expect(x.callsWith(primary, before)).toBe(2);
    expect(x.callsWith(primary, from)).toBeGreaterThan(0);
  }, 30_000);

  it('all keys dead gives a fast, clear error: 503 upstream_unavailable, then at once with Retry-After and no upstream attempt, in both envelopes', async () => {
    const keys = [secret('dead-1'), secret('dead-2')];
    for (const k of keys) await x.addKey(16, k, await refusedOrigin());
    const user = await x.f.account({ level: 16 });
    const [first, firstMs] = await timed(() => x.post(user.key, '/v1/chat/completions', { model: 'gpt-4o', messages: hello }));
    expect(first.status).toBe(503);
    expect(first.json.error).toMatchObject({ code: 'upstream_unavailable', request_id: first.headers.get('x-request-id') });
    expect(first.json.error.message).toContain(`(request ${first.json.error.request_id})`);
    expect(firstMs).toBeLessThan(1000);
    await x.post(user.key, '/v1/chat/completions', { model: 'gpt-4o', messages: hello });
    const [later, laterMs] = await timed(() => x.post(user.key, '/v1/chat/completions', { model: 'gpt-4o', messages: hello }));
    expect(later.status).toBe(503);
    expect(later.json.error.code).toBe('upstream_unavailable');
    expect(Number(later.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(laterMs).toBeLessThan(150);
    expect(x.logged('upstream_failed').find((l) => l.request === later.json.error.request_id)).toMatchObject({ attempts: 0 });
    // The Anthropic SDK raises its own class on Anthropic's envelope, with the same code.
    const err: any = await x.anthropic(user.key).messages.create({ model: 'claude-sonnet-4-5', max_tokens: 16, messages: hello }).catch((e) => e);
    expect(err.status).toBe(503);
    expect(err.error).toMatchObject({ type: 'error', error: { type: 'overloaded_error', code: 'upstream_unavailable' } });
    expect(err.error.error.request_id).toBe(err.headers.get('x-request-id'));
  }, 30_000);

  it('400, 404 and 422 are passed back once: never retried on another key, never billed, the key stays healthy', async () => {
    const a = secret('4xx-a');
    const b = secret('4xx-b');
    const aId = await x.addKey(17, a);
    await x.addKey(17, b);
    const user = await x.f.account({ level: 17 });
    for (const status of [400, 404, 422]) {
      x.f.mock.behave(a, { status });
      x.f.mock.behave(b, { status });
      const from = x.f.mock.requests.length;
      const r = await ok(user.key);
      expect(r.status).toBe(status);
      expect(x.f.mock.requests.length - from).toBe(1);
    }
    expect(await x.f.usage(user.id)).toEqual([]);
    expect(await x.health([aId])).toEqual([]);
  });

  it('failed attempts are never billed; the fallback model that answered is reported and billed with its usage', async () => {
    await x.f.config({ MODEL_FAILOVER: 'gpt-4.1=gpt-4.1-mini' });
    const keys = [secret('fb-1'), secret('fb-2')];
    for (const k of keys) {
      await x.addKey(18, k);
      x.f.mock.behave(k, { status: 503, onlyModels: ['gpt-4.1'] });
    }
    const user = await x.f.account({ level: 18 });
    const r = await x.openai(user.key).chat.completions.create({ model: 'gpt-4.1', messages: hello });
    expect(r.model).toBe('gpt-4.1-mini');
    const rows = await x.f.usage(user.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ model: 'gpt-4.1-mini', prompt: r.usage!.prompt_tokens, completion: r.usage!.completion_tokens, status: 'ok' });
    const price = (r.usage!.prompt_tokens * 0.4 + r.usage!.completion_tokens * 1.6) / 1e6;
    expect(rows[0].credit_used).toBeCloseTo(price, 12);
  });

  it('no response body of any scenario above names an upstream host, URL, address or SecretKey, or an internal error', async () => {
    await x.settled();
    const errors = x.bodies.filter((b) => b.status >= 400);
    expect(errors.length).toBeGreaterThan(5);
    expect(x.needles.size).toBeGreaterThan(10);
    // The 4xx the upstream answered itself are passed through as its own text.
    expect(leaks(x.bodies, x.needles)).toEqual([]);
  });
});
