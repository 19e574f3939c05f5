import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { openTestDatabase } from '../../testing/database';
import type { Database } from '../../adapters/storage/database';
import { DatabaseResponseKeys, SharedResponseKeyBook } from '../../state/response-keys/response-keys';
import { FileBook } from './file-book';

let database: Database;
let close: () => Promise<void>;
let book: FileBook;
const log = { warn: () => {} };

beforeAll(async () => {
  ({ database, close } = await openTestDatabase());
  book = new FileBook(database.db, new SharedResponseKeyBook(new DatabaseResponseKeys(database.db), log));
}, 60_000);
afterAll(async () => { await close?.(); });

const me = { ownerId: 1, accountId: 1 };

describe('the file book', () => {
  it('pages an account\'s files by creation time both ways, after a cursor, by purpose, leaving out deleted and others\' files', async () => {
    for (let i = 0; i < 5; i++) await book.rememberFile({ id: `file-page-${i}`, ...me, keyId: 7, purpose: i % 2 ? 'user_data' : 'batch' });
    await book.rememberFile({ id: 'file-other', ownerId: 1, accountId: 2, keyId: 7, purpose: 'batch' });
    await book.rememberFile({ id: 'file-page-gone', ...me, keyId: 7, purpose: 'batch' });
    await book.forget(me, 'file-page-gone');
    // Files made in the same instant are still ordered (by ID).
    await database.db.execute(sql`update batch_files set created_at = now() where id in ('file-page-3', 'file-page-4')`);
    const ids = async (q: Parameters<FileBook['page']>[1]) => (await book.page(me, q))!.rows.map((r) => r.id);
    const asc = await ids({ limit: 100, order: 'asc' });
    expect(asc).toHaveLength(5);
    expect(await ids({ limit: 100, order: 'desc' })).toEqual([...asc].reverse());
    const first = (await book.page(me, { limit: 2, order: 'asc' }))!;
    expect(first.more).toBe(true);
    expect(await ids({ limit: 2, order: 'asc', after: first.rows[1].id })).toEqual(asc.slice(2, 4));
    expect(await ids({ limit: 10, order: 'asc', after: asc[3] })).toEqual([asc[4]]);
    expect(await ids({ limit: 10, order: 'desc', after: asc[3] })).toEqual([asc[2], asc[1], asc[0]]);
    expect((await ids({ limit: 10, order: 'asc', purpose: 'user_data' })).sort()).toEqual(['file-page-1', 'file-page-3']);
    expect(await book.page(me, { limit: 10, order: 'asc', after: 'file-other' })).toBeUndefined();
  });

  it('finds the key and account of a file, and an account\'s own file only', async () => {
    await book.rememberFile({ id: 'file-held', ...me, keyId: 9, purpose: 'batch', model: 'gpt-4o-mini', url: '/v1/chat/completions', lines: 3, inputBound: 100, outputCapped: 10, uncappedLines: 1 });
    expect(await book.holderOf(1, 'file-held')).toMatchObject({ keyId: 9, accountId: 1 });
    expect(await book.holderOf(2, 'file-held')).toBeNull();
    // Noted twice (a batch settled twice): nothing changes.
    await book.rememberFile({ id: 'file-held', ownerId: 1, accountId: 5, keyId: 1, purpose: 'batch_output' });
    expect(await book.fileOf(me, 'file-held')).toMatchObject({ keyId: 9, lines: 3, inputBound: 100, outputCapped: 10, uncappedLines: 1, model: 'gpt-4o-mini' });
    expect(await book.fileOf({ ownerId: 1, accountId: 5 }, 'file-held')).toBeNull();
    // Past the shared pair's life, the row still says where the file is.
    await database.db.execute(sql`delete from response_keys where response_id = 'file-held'`);
    const fresh = new FileBook(database.db, new SharedResponseKeyBook(new DatabaseResponseKeys(database.db), log));
    expect(await fresh.holderOf(1, 'file-held')).toMatchObject({ keyId: 9, accountId: 1 });
  });

  it('says why a key is unusable', async () => {
    expect(await book.whyUnusable(1, 999_999)).toBe('has been deleted');
  });
});
