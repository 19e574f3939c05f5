import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpClient } from '../testing/http';
import postgres from 'postgres';
import { Redis } from 'ioredis';
import { spawnServer, type RunningServer } from '../testing/spawn';
import { freshDatabaseUrl } from '../testing/database';
import { startMockUpstream, type MockUpstream } from '../testing/mock-upstream';
import { TcpRelay } from '../testing/tcp-relay';
import { needs, testRedisUrl } from '../testing/requirements';
import { generateAccountKey } from '../adapters/security/crypto';
import { costOf, priceFor } from '../domain/pricing/cost';
import { DEFAULT_OUTPUT_LIMIT, estimateInputTokens, maxCostOf, maxOutputTokens, modelLimits } from '../domain/pricing/estimate';

/**
 * Three gateway processes on one PostgreSQL database and the real Redis (through a TCP relay
 * the test can cut): money and limits hold across them, usage adds up exactly, and a Redis
 * outage shows the documented degraded mode and the recovery.
 */
const REDIS = new URL(testRedisUrl());
const MODEL = 'gpt-4o-mini';
const SECRET = 'sk-shared-money-0123456789abcdef';
const DOC = { model: MODEL, max_tokens: 200, messages: [{ role: 'user', content: 'hello there, how are you today?' }] };
const INPUT = estimateInputTokens(DOC);
const OUTPUT = maxOutputTokens(DOC, modelLimits(MODEL, DEFAULT_OUTPUT_LIMIT).output, false);
const PRICE = priceFor(MODEL, {});
/** What admission reserves per call, and (with the mock answering the full output) what it costs. */
const PER_CALL = maxCostOf(INPUT, OUTPUT, PRICE, 1, 1);
const MIN_BALANCE = 2;
/** Calls without max_tokens whose answers cost far more than the old fixed reservations held (see gateway/end-to-end/reservations.test.ts). */
const CJK_PRICING = { 'cjk-model': { InputText: 100, OutputText: 1 } };
const UNLIMITED = [
  { level: 2, model: 'gpt-4o-mini', secret: 'sk-shared-money-mini-7000-0123456789', usage: { prompt_tokens: 30, completion_tokens: 7000 }, content: 'Write me a long story.' },
  { level: 3, model: 'gpt-5', secret: 'sk-shared-money-gpt5-40000-012345678', usage: { prompt_tokens: 30, completion_tokens: 40_500, reasoning_tokens: 40_000 }, content: 'Prove it.' },
  { level: 4, model: 'cjk-model', secret: 'sk-shared-money-cjk-3000-0123456789', usage: { prompt_tokens: 4500, completion_tokens: 200 }, content: '请帮我把下面这段很长的中文文本总结一下并且列出要点'.repeat(150).slice(0, 3000) },
];

describe.runIf(process.env.TEST_DATABASE_URL)('three instances sharing money and limits through PostgreSQL and Redis', needs('redis'), () => {
  let db: { url: string; drop: () => Promise<void> };
  let mock: MockUpstream;
  let relay: TcpRelay;
  let servers: RunningServer[] = [];
  const rootKey = generateAccountKey();
  const prefix = `test:money:${process.pid}:${Date.now()}:`;

  const admin = (method: string, path: string, body?: unknown) => new HttpClient(servers[0].url, rootKey).ok(method, path, body);
  const createUser = async (name: string, fields: Record<string, unknown>) =>
    (await admin('POST', '/x-users', { Name: name, Email: `${name}@example.test`, ...fields })).User as { ID: number; SecretKey: string };
  const call = (server: RunningServer, key: string) => fetch(`${server.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(DOC),
  });
  const sql = () => postgres(db.url, { max: 1, onnotice: () => {} });
  /** Every served call is billed once the recorders have written (every 200 ms): the account's usage total, after its `served` records are in. */
  const billedOnceWritten = async (accountId: number, served: number): Promise<number> => {
    const s = sql();
    try {
      let records = 0;
      for (let i = 0; i < 50 && records < served; i++) {
        [{ n: records }] = await s<{ n: number }[]>`select count(*)::int as n from usage_records where account_id = ${accountId}`;
        if (records < served) await new Promise((r) => setTimeout(r, 100));
      }
      expect(records).toBe(served);
      const [{ total }] = await s<{ total: string }[]>`select coalesce(sum(credit_used), 0)::text as total from usage_records where account_id = ${accountId}`;
      return Number(total);
    } finally {
      await s.end();
    }
  };

  beforeAll(async () => {
    db = await freshDatabaseUrl();
    mock = await startMockUpstream();
    mock.behave(SECRET, { usage: { prompt_tokens: INPUT, completion_tokens: OUTPUT } });
    relay = new TcpRelay({ host: REDIS.hostname, port: Number(REDIS.port || 6379) });
    await relay.up();
    const env = {
      DATABASE_URL: db.url, ROOT_KEY: rootKey, MASTER_KEY: 'switchyard-shared-master-key-0123',
      REDIS_URL: `redis://127.0.0.1:${relay.port}${REDIS.pathname}`, REDIS_PREFIX: prefix, USER_MIN_BALANCE: String(MIN_BALANCE),
    };
    servers.push(await spawnServer(env, 90_000));
    await admin('POST', '/x-keys', { Level: 1, Provider: mock.url, SecretKey: SECRET, Status: true });
    for (const u of UNLIMITED) {
      mock.behave(u.secret, { usage: u.usage });
      await admin('POST', '/x-keys', { Level: u.level, Provider: mock.url, SecretKey: u.secret, Status: true });
    }
    await admin('PUT', '/x-config', { PRICING: JSON.stringify({ ChatPricing: CJK_PRICING }) });
    // The others start after the key exists, so each loads it at start.
    servers.push(...await Promise.all([spawnServer(env, 90_000), spawnServer(env, 90_000)]));
  }, 180_000);

  afterAll(async () => {
    await relay?.up();
    for (const s of servers) await s.stop();
    await mock?.close();
    await relay?.down();
    const r = new Redis(REDIS.toString());
    const keys = await r.keys(`${prefix}*`);
    if (keys.length) await r.del(...keys);
    r.disconnect();
    await db?.drop();
  }, 60_000);

  it('150 concurrent calls over three instances against credit for 20: at most 21 served, the rest 402, every served one billed', async () => {
    const credit = MIN_BALANCE + 20 * PER_CALL;
    const user = await createUser('twenty', { CreditGranted: credit });
    const answers = await Promise.all(Array.from({ length: 150 }, (_, i) => call(servers[i % 3], user.SecretKey)));
    const statuses = answers.map((a) => a.status);
    const served = statuses.filter((s) => s === 200).length;
    const refused = await Promise.all(answers.filter((a) => a.status !== 200).map(async (a) => ({ status: a.status, code: (await a.json()).error?.code })));
    expect(served).toBeGreaterThanOrEqual(18);
    expect(served).toBeLessThanOrEqual(21);
    expect(new Set(refused.map((r) => `${r.status} ${r.code}`))).toEqual(new Set(['402 insufficient_balance']));
    expect(await billedOnceWritten(user.ID, served)).toBeCloseTo(served * costOf({ prompt: INPUT, completion: OUTPUT, reasoning: 0, cached: 0, cacheWrite: 0 }, PRICE, 1, 1), 9);
  }, 60_000);

  it('100 calls without max_tokens over three instances, against credit for about 20 real answers: at most 21 served, the balance never below the minimum', async () => {
    for (const u of UNLIMITED) {
      const cost = costOf({ prompt: u.usage.prompt_tokens, completion: u.usage.completion_tokens, reasoning: u.usage.reasoning_tokens ?? 0, cached: 0, cacheWrite: 0 }, priceFor(u.model, { ChatPricing: CJK_PRICING }), 1, 1);
      const user = await createUser(`unlimited${u.level}`, { CreditGranted: MIN_BALANCE + 20 * cost, Level: u.level });
      const body = JSON.stringify({ model: u.model, messages: [{ role: 'user', content: u.content }] });
      const answers = await Promise.all(Array.from({ length: 100 }, (_, i) => fetch(`${servers[i % 3].url}/v1/chat/completions`, {
        method: 'POST', headers: { authorization: `Bearer ${user.SecretKey}`, 'content-type': 'application/json' }, body,
      })));
      const served = answers.filter((a) => a.status === 200).length;
      expect(served, u.model).toBeGreaterThanOrEqual(1);
      expect(served, u.model).toBeLessThanOrEqual(21);
      expect(new Set(answers.filter((a) => a.status !== 200).map((a) => a.status))).toEqual(new Set([402]));
      const billed = await billedOnceWritten(user.ID, served);
      expect(billed).toBeCloseTo(served * cost, 9);
      expect(billed).toBeLessThanOrEqual(20 * cost + 1e-9);
    }
  }, 90_000);

  it('an RPM 30 account gets 30 of 90 simultaneous calls through across the three', async () => {
    const user = await createUser('rpm30', { CreditGranted: 100, RPM: 30 });
    const answers = await Promise.all(Array.from({ length: 90 }, (_, i) => call(servers[i % 3], user.SecretKey)));
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(30);
    expect(statuses.filter((s) => s === 429)).toHaveLength(60);
    const limited = answers.find((a) => a.status === 429)!;
    expect(limited.headers.get('x-ratelimit-scope')).toBe('RPM');
  }, 60_000);

  it('Redis cut under load: charged calls are refused 503 with Retry-After, Root keeps being served, health says degraded; all recover when it returns', async () => {
    const user = await createUser('outage', { CreditGranted: 100 });
    for (const s of servers) expect((await call(s, user.SecretKey)).status).toBe(200);
    let stop = false;
    const seen: string[] = [];
    // Load from both kinds of caller while the link is cut and restored.
    const load = (async () => {
      while (!stop) {
        const answers = await Promise.all(servers.flatMap((s) => [call(s, user.SecretKey), call(s, rootKey)]));
        for (const a of answers) seen.push(String(a.status));
      }
    })();
    await new Promise((r) => setTimeout(r, 300));
    await relay.down();
    await new Promise((r) => setTimeout(r, 2000));
    for (const s of servers) {
      const charged = await call(s, user.SecretKey);
      expect(charged.status).toBe(503);
      expect(charged.headers.get('retry-after')).toMatch(/^\d+$/);
      expect((await charged.json()).error.code).toBe('shared_state_unavailable');
      expect((await call(s, rootKey)).status).toBe(200);
      expect(await (await fetch(`${s.url}/healthz`)).json()).toEqual({ status: 'ok', sharedState: 'degraded' });
      expect(s.stdout()).toContain('"event":"shared_state_degraded"');
    }
    await relay.up();
    // Recovery without a restart: the link reconnects (backoff at most 2 s) and rejoins.
    for (const s of servers) {
      let status = 0;
      for (let i = 0; i < 100 && status !== 200; i++) {
        status = (await call(s, user.SecretKey)).status;
        if (status !== 200) await new Promise((r) => setTimeout(r, 100));
      }
      expect(status).toBe(200);
      expect(await (await fetch(`${s.url}/healthz`)).json()).toEqual({ status: 'ok' });
      expect(s.stdout()).toContain('"event":"shared_state_recovered"');
    }
    stop = true;
    await load;
    expect(seen).toContain('200');
    expect(seen).toContain('503');
    expect(seen.filter((s) => s !== '200' && s !== '503')).toEqual([]);
  }, 90_000);

  it('usage from all three adds up exactly after they stop: records = credit taken from the cards + overdraft', async () => {
    const s = sql();
    try {
      const before = await s<{ id: number; granted: string }[]>`select account_id as id, sum(amount)::text as granted from credit_grants group by account_id`;
      for (const server of servers) expect(await server.stop()).toBe(0);
      servers = [];
      for (const { id, granted } of before) {
        const [{ used }] = await s<{ used: string }[]>`select coalesce(sum(credit_used), 0)::text as used from usage_records where account_id = ${id}`;
        const [{ left }] = await s<{ left: string }[]>`select coalesce(sum(balance), 0)::text as left from credit_grants where account_id = ${id}`;
        const [{ overdraft }] = await s<{ overdraft: string }[]>`select overdraft::text from accounts where id = ${id}`;
        expect(Number(used)).toBeCloseTo(Number(granted) - Number(left) + Number(overdraft), 9);
        const [{ n }] = await s<{ n: number }[]>`select count(*)::int as n from (select request_id from usage_records where account_id = ${id} group by request_id having count(*) > 1) d`;
        expect(n).toBe(0);
      }
    } finally {
      await s.end();
    }
  }, 60_000);
});
