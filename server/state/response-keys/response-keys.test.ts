import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase } from '../../testing/database';
import { connectRedis, type RedisLink } from '../../adapters/redis/link';
import { createLogger } from '../../core/log';
import { needs, testRedisUrl } from '../../testing/requirements';
import type { Database } from '../../adapters/storage/database';
import { responseKeys } from '../../adapters/storage/schema';
import { DatabaseResponseKeys, parseCreator, RedisResponseKeys, SharedResponseKeyBook, type SharedResponseKeys } from './response-keys';

const log = createLogger(() => {}, 'error');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const alice = { ownerId: 7, accountId: 70 };

/** What every shared store must do: one book writes, a fresh one (another instance) reads; pairs end with their time. */
function contract(name: string, store: () => SharedResponseKeys) {
  it(`${name}: another instance reads the pair and its account, per Owner, until it expires`, async () => {
    const writer = new SharedResponseKeyBook(store(), log, 300);
    await writer.remember(alice, 'resp_a', 41);
    expect(writer.keyOf(7, 'resp_a')).toBe(41);
    expect(writer.creatorOf(7, 'resp_a')).toMatchObject({ keyId: 41, accountId: 70 });
    const reader = new SharedResponseKeyBook(store(), log, 300);
    expect(await reader.keyOf(7, 'resp_a')).toBe(41);
    expect(await reader.creatorOf(7, 'resp_a')).toEqual({ keyId: 41, accountId: 70 });
    expect(await reader.keyOf(8, 'resp_a')).toBeNull();
    expect(await reader.keyOf(7, 'resp_b')).toBeNull();
    await writer.remember({ ownerId: 7, accountId: 71 }, 'resp_a', 42);
    expect(await reader.keyOf(7, 'resp_a')).toBe(42);
    expect(await new SharedResponseKeyBook(store(), log, 300).creatorOf(7, 'resp_a')).toEqual({ keyId: 42, accountId: 71 });
    await sleep(400);
    expect(await writer.keyOf(7, 'resp_a')).toBeNull();
    expect(await reader.keyOf(7, 'resp_a')).toBeNull();
  });
}

describe('response keys in the database', () => {
  let database: Database;
  let close: () => Promise<void>;
  beforeAll(async () => ({ database, close } = await openTestDatabase()));
  afterAll(async () => { await close?.(); });
  contract('database', () => new DatabaseResponseKeys(database.db));

  it('reads a row written before accounts were kept, with no account', async () => {
    await database.db.insert(responseKeys).values({ ownerId: 9, responseId: 'resp_old', keyId: 5, expiresAt: new Date(Date.now() + 60_000) });
    expect(await new DatabaseResponseKeys(database.db).get(9, 'resp_old')).toEqual({ keyId: 5, accountId: null });
  });
});

describe('response keys in Redis', needs('redis'), () => {
  let link: RedisLink;
  beforeAll(async () => {
    link = connectRedis(testRedisUrl(), { prefix: `test:response-keys-state:${process.pid}:${Date.now()}:`, log });
    await link.ready(5000);
  });
  afterAll(async () => { await link?.close(); });
  contract('Redis', () => new RedisResponseKeys(link));
});

describe('a shared store that fails', () => {
  it('answers null and logs, so the call is routed as any other', async () => {
    const lines: string[] = [];
    const broken: SharedResponseKeys = { put: async () => { throw new Error('down'); }, get: async () => { throw new Error('down'); } };
    const book = new SharedResponseKeyBook(broken, createLogger((l) => lines.push(l), 'warn'));
    await book.remember({ ownerId: 1, accountId: 10 }, 'resp_x', 3);
    expect(book.keyOf(1, 'resp_x')).toBe(3);
    expect(await new SharedResponseKeyBook(broken, createLogger((l) => lines.push(l), 'warn')).keyOf(1, 'resp_x')).toBeNull();
    expect(lines.map((l) => JSON.parse(l).msg ?? JSON.parse(l).event)).toEqual(expect.arrayContaining([expect.stringMatching(/response_key_not_shared/), expect.stringMatching(/response_key_unreadable/)]));
  });
});

describe('a value in Redis', () => {
  it('names the key and the account; one written before accounts were kept names the key alone', () => {
    expect(parseCreator('41:70')).toEqual({ keyId: 41, accountId: 70 });
    expect(parseCreator('41')).toEqual({ keyId: 41, accountId: null });
    expect(parseCreator('x')).toBeNull();
    expect(parseCreator('41:x')).toBeNull();
  });
});
