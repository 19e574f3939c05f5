import { sql } from 'drizzle-orm';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startTestGateway, type TestGateway } from '../testing/gateway';
import { startMockUpstream, type Behaviour, type MockUpstream } from '../testing/mock-upstream';
import { insertAccount, type TestAccount } from '../testing/accounts';
import type { Settings } from '../core/settings';
import { freshDatabaseUrl } from '../testing/database';
import { testRedisUrl } from '../testing/requirements';

/**
 * Test-only: a gateway in front of the mock upstream, with helpers to add provider keys and
 * accounts and to talk to the proxy with the real `openai` and `@anthropic-ai/sdk` clients.
 */
export interface ProxyFixture {
  gw: TestGateway;
  mock: MockUpstream;
  /** Adds an enabled provider key whose SecretKey is `secret` (the mock's credential); returns its ID. */
  addKey(level: number, secret: string, opts?: { provider?: string; config?: Record<string, unknown>; name?: string }): Promise<number>;
  /** A user account below Root (or `parent`) with credit, routed to `level` unless a mapper says otherwise. */
  account(fields?: Parameters<typeof insertAccount>[1]): Promise<TestAccount>;
  openai(key: string): OpenAI;
  anthropic(key: string): Anthropic;
  /** Writes buffered usage and returns the account's usage_records, oldest first. */
  usage(accountId: number): Promise<UsageRow[]>;
  /** Sets Owner configuration keys through `PUT /x-config`. */
  config(values: Record<string, string>): Promise<void>;
  close(): Promise<void>;
}

export interface UsageRow {
  model: string;
  level: number | null;
  key_id: number | null;
  endpoint: string;
  prompt: number;
  completion: number;
  reasoning: number;
  cached: number;
  credit_used: number;
  status: string;
}

let keySerial = 0;
/** A SecretKey long enough for the API (20+ characters) that is also a readable mock credential. */
export const secret = (label: string) => `sk-up-${label}-${String(++keySerial).padStart(4, '0')}-aaaaaaaaaaaa`;

export async function startProxyFixture(overrides: Partial<Settings> = {}): Promise<ProxyFixture> {
  const mock = await startMockUpstream();
  const gw = await startTestGateway(overrides);
  return {
    gw,
    mock,
    async addKey(level, secretKey, opts = {}) {
      const r = await gw.root.post('/x-keys', {
        Name: opts.name ?? `L${level}`, Level: level, Provider: opts.provider ?? mock.url, SecretKey: secretKey, Status: true,
        ...(opts.config ? { config: opts.config } : {}),
      });
      if (r.status !== 201) throw new Error(`add key: ${r.status} ${r.text}`);
      return r.body.Key.ID as number;
    },
    account: (fields = {}) => insertAccount(gw, { credit: 50, ...fields }),
    openai: (key) => new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 }),
    anthropic: (key) => new Anthropic({ apiKey: key, baseURL: gw.url, maxRetries: 0 }),
    async usage(accountId) {
      await gw.gateway.usage.flush();
      const rows = await gw.gateway.database.rows<UsageRow>(sql`select model, level, key_id, endpoint, prompt, completion, reasoning, cached, credit_used, status
        from usage_records where account_id = ${accountId} order by created_at`);
      return rows.map((r) => ({ ...r, credit_used: Number(r.credit_used) }));
    },
    async config(values) {
      const r = await gw.root.put('/x-config', values);
      if (r.status !== 200) throw new Error(`x-config: ${r.status} ${r.text}`);
    },
    async close() {
      await gw.close();
      await mock.close();
    },
  };
}

export const hello = [{ role: 'user' as const, content: 'Say hello through the gateway' }];

/**
 * Collects a stream, returning what arrived and the error that ended it (if any). The error is
 * whatever the SDK threw (its own error classes, with `status`, `error`, …): tests read it as such.
 */
export async function drain<T>(stream: AsyncIterable<T>): Promise<{ items: T[]; error: any }> {
  const items: T[] = [];
  try {
    for await (const x of stream) items.push(x);
    return { items, error: undefined };
  } catch (error) {
    return { items, error };
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let levelSerial = 500;
/** A Level no other test of the process uses (the route tests give each case its own). */
export const nextLevel = () => ++levelSerial;

/** A user on a Level of its own, served by one new mock key whose secret is `up`. */
export async function keyedUser(f: ProxyFixture, label: string, fields: Parameters<ProxyFixture['account']>[0] = {}) {
  const up = secret(label);
  const level = nextLevel();
  await f.addKey(level, up);
  const user = await f.account({ level, ...fields });
  return { up, user, level, client: f.openai(user.key) };
}

/** Two keys on a Level of their own, the first answering as `bad` says, and a user routed there. */
export async function failingPair(f: ProxyFixture, label: string, bad: Behaviour) {
  const badKey = secret(`${label}-bad`);
  const goodKey = secret(`${label}-good`);
  const level = nextLevel();
  await f.addKey(level, badKey);
  await f.addKey(level, goodKey);
  f.mock.behave(badKey, bad);
  const user = await f.account({ level });
  return { bad: badKey, good: goodKey, user, level };
}

/** Two gateways on one fresh PostgreSQL database (TEST_DATABASE_URL) in front of one mock upstream. */
export interface InstancePair {
  gws: TestGateway[];
  mock: MockUpstream;
  close(): Promise<void>;
}

/** Starts an InstancePair; with `redis`, the instances also share Redis (under a prefix of their own, named after `label`). */
export async function startInstancePair(label: string, redis: boolean): Promise<InstancePair> {
  const mock = await startMockUpstream();
  const db = await freshDatabaseUrl();
  const shared = redis ? { redisUrl: testRedisUrl(), redisPrefix: `test:${label}:${process.pid}:${Date.now()}:` } : {};
  const first = await startTestGateway({ databaseUrl: db.url, ...shared });
  const gws = [first, await startTestGateway({ databaseUrl: db.url, rootKey: first.rootKey, ...shared })];
  return {
    gws,
    mock,
    async close() {
      for (const g of gws) await g.close();
      await mock.close();
      await db.drop();
    },
  };
}
