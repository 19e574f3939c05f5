import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase } from '../../testing/database';
import { connectRedis, type RedisLink } from '../../adapters/redis/link';
import { createLogger } from '../../core/log';
import { needs, testRedisUrl } from '../../testing/requirements';
import type { Database } from '../../adapters/storage/database';
import { DatabaseConversations, RedisConversations, StoredResponseBook, type KeptText, type SharedConversations } from './stored-responses';

const quiet = createLogger(() => {}, 'error');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const alice = { ownerId: 7, accountId: 70 };
const items = [
  { type: 'message', role: 'user', content: 'List the files' },
  { type: 'reasoning', id: 'rs_1', summary: [], content: [{ type: 'reasoning_text', text: 'Use ls.' }], encrypted_content: 'sig_1' },
  { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'shell', arguments: '{"cmd":"ls"}', status: 'completed' },
];

const response = { id: 'resp_gw_a', object: 'response', status: 'completed', output: items.slice(1) };

/** What every shared store must do: one book keeps, a fresh one (another instance) recalls, for its account only, until it expires. */
function contract(name: string, store: () => SharedConversations) {
  it(`${name}: another instance reads the items and the response, deletes them, for the account that kept them`, async () => {
    const writer = new StoredResponseBook(store(), quiet, { maxBytes: 10_000 });
    await writer.keep(alice, 'resp_gw_r', items, response);
    const reader = new StoredResponseBook(store(), quiet, { maxBytes: 10_000 });
    expect(await reader.read(alice, 'resp_gw_r')).toEqual({ items, response });
    expect(await reader.recall(alice, 'resp_gw_r')).toEqual(items);
    const other = { ownerId: 7, accountId: 71 };
    expect(await reader.read(other, 'resp_gw_r')).toBeNull();
    expect(await reader.forget(other, 'resp_gw_r')).toBe(false);
    expect(await reader.forget(alice, 'resp_gw_r')).toBe(true);
    expect(await writer.read(alice, 'resp_gw_r')).toBeNull();
    expect(await writer.recall(alice, 'resp_gw_r')).toBeNull();
    expect(await writer.forget(alice, 'resp_gw_r')).toBe(false);
    // Kept without its Response object (as before it was kept): the items alone.
    await writer.keep(alice, 'resp_gw_o', items);
    expect(await reader.read(alice, 'resp_gw_o')).toEqual({ items, response: null });
  });

  it(`${name}: another instance recalls the items, for the account that kept them, until they expire`, async () => {
    const writer = new StoredResponseBook(store(), quiet, { maxBytes: 10_000, ttlMs: 400 });
    await writer.keep(alice, 'resp_gw_a', items);
    const reader = new StoredResponseBook(store(), quiet, { maxBytes: 10_000, ttlMs: 400 });
    expect(await reader.recall(alice, 'resp_gw_a')).toEqual(items);
    // Another account of the tenant, and another tenant, do not see it.
    expect(await reader.recall({ ownerId: 7, accountId: 71 }, 'resp_gw_a')).toBeNull();
    expect(await reader.recall({ ownerId: 8, accountId: 70 }, 'resp_gw_a')).toBeNull();
    expect(await reader.recall(alice, 'resp_gw_b')).toBeNull();
    await writer.keep(alice, 'resp_gw_a', items.slice(0, 1));
    expect(await reader.recall(alice, 'resp_gw_a')).toEqual(items.slice(0, 1));
    await sleep(600);
    expect(await reader.recall(alice, 'resp_gw_a')).toBeNull();
  });
}

describe('stored responses in the database', () => {
  let database: Database;
  let close: () => Promise<void>;
  beforeAll(async () => ({ database, close } = await openTestDatabase()));
  afterAll(async () => { await close?.(); });
  contract('database', () => new DatabaseConversations(database.db));
});

describe('stored responses in Redis', needs('redis'), () => {
  let link: RedisLink;
  beforeAll(async () => {
    link = connectRedis(testRedisUrl(), { prefix: `test:stored-responses:${process.pid}:${Date.now()}:`, log: quiet });
    await link.ready(5000);
  });
  afterAll(async () => { await link?.close(); });
  contract('Redis', () => new RedisConversations(link));
});

describe('a conversation that cannot be kept', () => {
  const events = (lines: string[]) => lines.map((l) => JSON.parse(l).event);

  it('is logged, not raised, when it is bigger than the cap or the store fails; a failed read rejects', async () => {
    const lines: string[] = [];
    const log = createLogger((l) => lines.push(l), 'warn');
    const kept = new Map<string, KeptText>();
    const memory: SharedConversations = {
      put: async (_w, id, text) => { kept.set(id, text); },
      get: async (_w, id) => kept.get(id) ?? null,
      delete: async (_w, id) => kept.delete(id),
    };
    const book = new StoredResponseBook(memory, log, { maxBytes: 300 });
    await book.keep(alice, 'resp_gw_small', items.slice(0, 1));
    await book.keep(alice, 'resp_gw_big', [...items, { type: 'message', role: 'user', content: 'é'.repeat(120) }]);
    expect([...kept.keys()]).toEqual(['resp_gw_small']);
    expect(await book.recall(alice, 'resp_gw_big')).toBeNull();
    expect(events(lines)).toEqual(['stored_response_too_large']);
    expect(JSON.parse(lines[0])).toMatchObject({ response: 'resp_gw_big', max_bytes: 300 });

    const down = async () => { throw new Error('down'); };
    const broken: SharedConversations = { put: down, get: down, delete: down };
    const failing = new StoredResponseBook(broken, log, { maxBytes: 300 });
    await failing.keep(alice, 'resp_gw_x', items.slice(0, 1));
    await failing.settle();
    expect(events(lines).at(-1)).toBe('stored_response_not_kept');
    await expect(failing.recall(alice, 'resp_gw_x')).rejects.toThrow('down');
    await expect(failing.read(alice, 'resp_gw_x')).rejects.toThrow('down');
    await expect(failing.forget(alice, 'resp_gw_x')).rejects.toThrow('down');
  });
});
