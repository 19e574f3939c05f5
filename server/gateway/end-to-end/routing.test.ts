import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { expectEnvelope } from '../../testing/http';
import { hello, secret, sleep, startProxyFixture, type ProxyFixture } from '../test-fixture';

let f: ProxyFixture;
beforeAll(async () => {
  // Circuits that never open here: these tests count attempts (the fault suite covers circuits).
  f = await startProxyFixture({ keySleepMs: 800, switchOverWindowMs: 1500, upstreamTimeoutMs: 1000, maxAttemptsPerLevel: 3, keyFailureThreshold: 1000 });
  await f.config({
    MODEL_MAPPER: 'gpt-3.5*=gpt-4o-mini, alias-exact=gpt-4o, alias-*=gpt-4.1',
    LEVEL_MAPPER: 'lvl-*=21, fo-primary=40, fo-second=41, fo-third=42',
    MODEL_FAILOVER: 'fo-primary=fo-second|fo-third',
    SWITCH_OVER: '50=51',
    // Invented model names are served (billed at a fallback): the price policy has tests of its own.
    UNPRICED_MODEL_POLICY: 'bill:1,1',
  });
});
afterAll(async () => { await f?.close(); });

const chat = (key: string, model: string, stream = false) => f.gw.as(key).post('/v1/chat/completions', { model, messages: hello, ...(stream ? { stream } : {}) });
const credentialsSince = (n: number) => f.mock.requests.slice(n).map((r) => r.credential);

describe('model and Level mapping', () => {
  it('maps with the account, its ancestors, then the Owner; exact entries before wildcards', async () => {
    const up = secret('map');
    await f.addKey(20, up);
    const parent = await f.account({ level: 20, modelMapper: 'gpt-3.5*=o4-mini' });
    const child = await f.account({ level: 20, parent });
    const own = await f.account({ level: 20, parent, modelMapper: 'gpt-3.5-turbo=o3, alias-exact=gpt-5' });
    const plain = await f.account({ level: 20 });
    const upstreamModel = async (key: string, model: string) => {
      const r = await chat(key, model);
      expect(r.status, r.text).toBe(200);
      return (f.mock.requests.at(-1)!.body as { model: string }).model;
    };
    expect(await upstreamModel(plain.key, 'gpt-3.5-turbo')).toBe('gpt-4o-mini');
    expect(await upstreamModel(plain.key, 'alias-exact')).toBe('gpt-4o');
    expect(await upstreamModel(plain.key, 'alias-other')).toBe('gpt-4.1');
    expect(await upstreamModel(plain.key, 'unmapped-model')).toBe('unmapped-model');
    expect(await upstreamModel(child.key, 'gpt-3.5-turbo')).toBe('o4-mini');
    expect(await upstreamModel(own.key, 'gpt-3.5-turbo')).toBe('o3');
    expect(await upstreamModel(own.key, 'alias-exact')).toBe('gpt-5');
    expect(await upstreamModel(own.key, 'alias-other')).toBe('gpt-4.1');
    // The mapped model is the one billed.
    expect((await f.usage(plain.id)).map((r) => r.model)).toEqual(['gpt-4o-mini', 'gpt-4o', 'gpt-4.1', 'unmapped-model']);
  });

  it('picks the Level from the account LevelMapper, then LEVEL_MAPPER, then the account Level', async () => {
    const k21 = secret('lvl21');
    const k22 = secret('lvl22');
    const k23 = secret('lvl23');
    await f.addKey(21, k21);
    await f.addKey(22, k22);
    await f.addKey(23, k23);
    const user = await f.account({ level: 23, levelMapper: 'lvl-special=22' });
    const n = f.mock.requests.length;
    for (const model of ['lvl-any', 'lvl-special', 'other']) expect((await chat(user.key, model)).status).toBe(200);
    expect(credentialsSince(n)).toEqual([k21, k22, k23]);
    expect((await f.usage(user.id)).map((r) => r.level)).toEqual([21, 22, 23]);
  });
});

describe('keys of a Level', () => {
  it('round-robins over the enabled keys', async () => {
    const keys = [secret('rr-a'), secret('rr-b'), secret('rr-c')];
    for (const k of keys) await f.addKey(30, k);
    const user = await f.account({ level: 30 });
    const n = f.mock.requests.length;
    for (let i = 0; i < 6; i++) expect((await chat(user.key, 'gpt-4o', i % 2 === 1)).status).toBe(200);
    const seen = credentialsSince(n);
    expect(seen.slice(0, 3).sort()).toEqual([...keys].sort());
    expect(seen.slice(3)).toEqual(seen.slice(0, 3));
  });

  it('retries a connection error, a timeout, a 5xx and a 429 on the next key; failed attempts are not billed', async () => {
    const cases: [label: string, setup: (k: string) => { provider?: string }][] = [
      ['refused', () => ({ provider: 'http://127.0.0.1:9' })],
      ['timeout', (k) => (f.mock.behave(k, { delayMs: 2500 }), {})],
      ['5xx', (k) => (f.mock.behave(k, { status: 503 }), {})],
      ['429', (k) => (f.mock.behave(k, { status: 429 }), {})],
    ];
    let level = 310;
    for (const [label, setup] of cases) {
      const bad = secret(`bad-${label}`);
      const good = secret(`good-${label}`);
      await f.addKey(level, bad, setup(bad));
      const goodId = await f.addKey(level, good);
      const user = await f.account({ level: level++ });
      const n = f.mock.requests.length;
      // Two calls: round robin starts one of them on the failing key.
      for (let i = 0; i < 2; i++) {
        const r = await chat(user.key, 'gpt-4o', i === 1);
        expect(r.status, `${label}: ${r.text}`).toBe(200);
      }
      if (label !== 'refused') expect(credentialsSince(n), label).toContain(bad);
      else expect(f.gw.logs.some((l) => l.includes('upstream_attempt_failed') && l.includes('ECONNREFUSED'))).toBe(true);
      const rows = await f.usage(user.id);
      expect(rows.map((r) => r.key_id), label).toEqual([goodId, goodId]);
    }
  });

  it('sends a request again once when the upstream closed the kept connection it went out on', async () => {
    const k = secret('stale');
    await f.addKey(36, k);
    const user = await f.account({ level: 36 });
    // A first answer leaves a kept connection, which the next call reuses.
    expect((await chat(user.key, 'gpt-4o')).status).toBe(200);
    f.mock.behave(k, { dropConnection: true, times: 1 });
    let n = f.mock.requests.length;
    const again = await chat(user.key, 'gpt-4o');
    expect(again.status, again.text).toBe(200);
    expect(credentialsSince(n)).toEqual([k, k]);
    expect(await f.usage(user.id)).toHaveLength(2);
    // Once per call: a second drop is the upstream's failure, and this Level has no other key.
    expect((await chat(user.key, 'gpt-4o')).status).toBe(200);
    f.mock.behave(k, { dropConnection: true, times: 2 });
    n = f.mock.requests.length;
    expect(expectEnvelope(await chat(user.key, 'gpt-4o'), 503).code).toBe('upstream_unavailable');
    expect(credentialsSince(n)).toEqual([k, k]);
    expect(await f.usage(user.id)).toHaveLength(3);
  });

  it('tries at most maxAttemptsPerLevel keys, then answers 502', async () => {
    const keys = [secret('bad-1'), secret('bad-2'), secret('bad-3'), secret('bad-4')];
    for (const k of keys) {
      await f.addKey(32, k);
      f.mock.behave(k, { status: 500 });
    }
    const user = await f.account({ level: 32 });
    const n = f.mock.requests.length;
    const e = expectEnvelope(await chat(user.key, 'gpt-4o'), 502);
    expect(e.code).toBe('upstream_error');
    expect(f.mock.requests.length - n).toBe(3);
    expect(await f.usage(user.id)).toHaveLength(0);
  });

  it('puts a key to sleep on 429 (Retry-After honoured, else the cooldown) and wakes it by itself', async () => {
    const a = secret('sleep-a');
    const b = secret('sleep-b');
    const aId = await f.addKey(33, a);
    await f.addKey(33, b);
    const user = await f.account({ level: 33 });
    f.mock.behave(a, { status: 429, retryAfter: 1, times: 1 });
    let n = f.mock.requests.length;
    // Round robin reaches `a` within two calls; it answers 429 once and falls asleep.
    for (let i = 0; i < 2; i++) expect((await chat(user.key, 'gpt-4o')).status).toBe(200);
    expect(credentialsSince(n)).toContain(a);
    const conf = await f.gw.root.get('/x-conf');
    const sleeping = conf.body.SleepingKeys.find((k: { ID: number }) => k.ID === aId);
    expect(sleeping).toBeDefined();
    expect(Date.parse(sleeping.Until) - Date.now()).toBeGreaterThan(300);
    n = f.mock.requests.length;
    for (let i = 0; i < 3; i++) expect((await chat(user.key, 'gpt-4o')).status).toBe(200);
    expect(credentialsSince(n)).toEqual([b, b, b]);
    await sleep(1100);
    n = f.mock.requests.length;
    for (let i = 0; i < 2; i++) expect((await chat(user.key, 'gpt-4o')).status).toBe(200);
    expect(credentialsSince(n)).toContain(a);
    expect((await f.gw.root.get('/x-conf')).body.SleepingKeys.find((k: { ID: number }) => k.ID === aId)).toBeUndefined();

    // Without Retry-After the configured cooldown applies; with every key asleep the answer says when to retry.
    f.mock.behave(a, { status: 429 });
    f.mock.behave(b, { status: 429 });
    const limited = await chat(user.key, 'gpt-4o');
    expect(expectEnvelope(limited, 429).code).toBe('upstream_rate_limited');
    const asleep = await chat(user.key, 'gpt-4o');
    expect(expectEnvelope(asleep, 503).code).toBe('no_available_key');
    expect(Number(asleep.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    f.mock.behave(a, {});
    f.mock.behave(b, {});
    await sleep(900);
    expect((await chat(user.key, 'gpt-4o')).status).toBe(200);
  });

  it('disables a key the upstream refuses (401/403): DisabledKeys, the operation log, out of rotation', async () => {
    const good = secret('auth-good');
    const revoked = secret('auth-401');
    const forbidden = secret('auth-403');
    await f.addKey(34, good);
    const revokedId = await f.addKey(34, revoked);
    const forbiddenId = await f.addKey(34, forbidden);
    f.mock.behave(revoked, { status: 401 });
    f.mock.behave(forbidden, { status: 403 });
    const user = await f.account({ level: 34 });
    for (let i = 0; i < 3; i++) expect((await chat(user.key, 'gpt-4o')).status).toBe(200);
    await f.gw.gateway.proxy.health.settle();
    const disabled = (await f.gw.root.get('/x-conf')).body.DisabledKeys;
    expect(disabled.find((k: { ID: number }) => k.ID === revokedId).Reason).toMatch(/upstream answered 401/);
    expect(disabled.find((k: { ID: number }) => k.ID === forbiddenId).Reason).toMatch(/upstream answered 403/);
    expect((await f.gw.root.get(`/x-keys/${revokedId}`)).body[0]).toMatchObject({ Status: false, DisabledReason: expect.stringMatching(/401/) });
    const logs = await f.gw.gateway.database.rows<{ action: string; operator_id: number; details: string }>(
      sql`select action, operator_id, details from operation_logs where action = 'auto_disable_key' order by id`);
    expect(logs.map((l) => JSON.parse(l.details).key)).toEqual(expect.arrayContaining([revokedId, forbiddenId]));
    expect(logs[0].operator_id).toBe(1);
    const n = f.mock.requests.length;
    for (let i = 0; i < 4; i++) expect((await chat(user.key, 'gpt-4o')).status).toBe(200);
    expect(credentialsSince(n)).toEqual([good, good, good, good]);
  });

  it('answers 503 when a Level has no enabled key, and 400 when no key there can serve the endpoint', async () => {
    const user = await f.account({ level: 35 });
    expect(expectEnvelope(await chat(user.key, 'gpt-4o'), 503).code).toBe('no_provider_key');
    await f.addKey(35, secret('anthropic-only'), { config: { provider_type: 'anthropic' } });
    const r = await f.gw.as(user.key).post('/v1/embeddings', { model: 'gpt-4o', input: 'x' });
    expect(expectEnvelope(r, 400)).toMatchObject({ code: 'unsupported_by_provider', message: expect.stringContaining('anthropic key cannot serve /v1/embeddings') });
  });
});

describe('failover', () => {
  it('chains models with MODEL_FAILOVER when a model fails on every key and Level', async () => {
    const primary = secret('fo-1');
    const third = secret('fo-3');
    await f.addKey(40, primary);
    await f.addKey(42, third);
    f.mock.behave(primary, { status: 500 });
    const user = await f.account({ level: 1 });
    const n = f.mock.requests.length;
    const r = await f.openai(user.key).chat.completions.create({ model: 'fo-primary', messages: hello });
    expect(r.model).toBe('fo-third');
    expect(credentialsSince(n)).toEqual([primary, third]);
    const [row] = await f.usage(user.id);
    expect(row).toMatchObject({ model: 'fo-third', level: 42 });
  });

  it('switches a Level to its backup after more than 5 abnormal results in the window, and back once it is clean', async () => {
    const primary = secret('so-primary');
    const backup = secret('so-backup');
    await f.addKey(50, primary);
    await f.addKey(51, backup);
    const user = await f.account({ level: 50 });
    f.mock.behave(primary, { status: 502 });
    let n = f.mock.requests.length;
    // Each call fails once on the primary, then drifts to the backup: six abnormal results.
    for (let i = 0; i < 6; i++) expect((await chat(user.key, 'gpt-4o')).status).toBe(200);
    expect(credentialsSince(n).filter((c) => c === primary)).toHaveLength(6);
    n = f.mock.requests.length;
    f.mock.behave(primary, {});
    for (let i = 0; i < 3; i++) expect((await chat(user.key, 'gpt-4o')).status).toBe(200);
    expect(credentialsSince(n)).toEqual([backup, backup, backup]);
    await sleep(1600);
    n = f.mock.requests.length;
    expect((await chat(user.key, 'gpt-4o')).status).toBe(200);
    expect(credentialsSince(n)).toEqual([primary]);
    expect((await f.usage(user.id)).map((r) => r.level)).toEqual([51, 51, 51, 51, 51, 51, 51, 51, 51, 50]);
  });
});
