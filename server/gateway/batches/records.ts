/**
 * gateway_batches: whose a batch is, where it runs, what it holds, what it was billed. Every
 * read for a client is by the calling account: another account's batch is not found, exactly as
 * an ID never seen.
 */
import { and, asc, desc, eq, gt, isNull, lt, ne, or } from 'drizzle-orm';
import type { Db } from '../../adapters/storage/database';
import { gatewayBatches } from '../../adapters/storage/schema';
import { BATCH_ID, type BatchApi } from './routes';

export type BatchRow = typeof gatewayBatches.$inferSelect;

/** The status of a row whose batch the provider has not (yet) been seen to accept (pending.ts): no client reads or lists it. */
export const CREATING = 'creating';

export async function insertBatch(db: Db, row: typeof gatewayBatches.$inferInsert): Promise<void> {
  await db.insert(gatewayBatches).values(row);
}

/** The account's own batch of this API; null for any other. */
export async function ownBatch(db: Db, accountId: number, api: BatchApi, id: string): Promise<BatchRow | null> {
  const [row] = await db.select().from(gatewayBatches).where(and(eq(gatewayBatches.id, id), eq(gatewayBatches.accountId, accountId), eq(gatewayBatches.api, api), ne(gatewayBatches.status, CREATING)));
  return row ?? null;
}

/**
 * A page of the account's batches of one API, newest first (as both providers list them):
 * `after` the one named (OpenAI's `after`, Anthropic's `after_id`) or `before` it (Anthropic's
 * `before_id`: the newer ones, still newest first). One more than `limit` tells whether more follow.
 */
export async function pageOfBatches(db: Db, accountId: number, api: BatchApi, limit: number, cursor: { after?: string; before?: string }): Promise<{ rows: BatchRow[]; hasMore: boolean }> {
  const mine = and(eq(gatewayBatches.accountId, accountId), eq(gatewayBatches.api, api), ne(gatewayBatches.status, CREATING));
  const ref = cursor.after ?? cursor.before;
  let bound;
  if (ref !== undefined) {
    // A cursor that is no batch ID (NUL, anything a text column cannot hold) names no batch.
    const at = BATCH_ID.test(ref) ? await ownBatch(db, accountId, api, ref) : null;
    // A cursor that is not one of the account's batches starts nowhere: an empty page.
    if (!at) return { rows: [], hasMore: false };
    bound = cursor.after !== undefined
      ? or(lt(gatewayBatches.createdAt, at.createdAt), and(eq(gatewayBatches.createdAt, at.createdAt), lt(gatewayBatches.id, at.id)))
      : or(gt(gatewayBatches.createdAt, at.createdAt), and(eq(gatewayBatches.createdAt, at.createdAt), gt(gatewayBatches.id, at.id)));
  }
  const where = bound ? and(mine, bound) : mine;
  if (cursor.before !== undefined) {
    // The `limit` nearest newer ones, then shown newest first.
    const rows = await db.select().from(gatewayBatches).where(where).orderBy(asc(gatewayBatches.createdAt), asc(gatewayBatches.id)).limit(limit + 1);
    const hasMore = rows.length > limit;
    return { rows: rows.slice(0, limit).reverse(), hasMore };
  }
  const rows = await db.select().from(gatewayBatches).where(where).orderBy(desc(gatewayBatches.createdAt), desc(gatewayBatches.id)).limit(limit + 1);
  return { rows: rows.slice(0, limit), hasMore: rows.length > limit };
}

/** The provider's status and counts as last seen (never touches a settled batch's bill). */
export async function noteStatus(db: Db, id: string, s: { status: string; completed?: number; failed?: number }): Promise<void> {
  await db.update(gatewayBatches).set({
    status: s.status,
    ...(s.completed !== undefined ? { completedLines: s.completed } : {}),
    ...(s.failed !== undefined ? { failedLines: s.failed } : {}),
  }).where(eq(gatewayBatches.id, id));
}

/** Open batches, oldest first: the poller's work list (a partial index serves it). */
export async function openBatches(db: Db, limit: number): Promise<BatchRow[]> {
  return db.select().from(gatewayBatches).where(isNull(gatewayBatches.settledAt)).orderBy(asc(gatewayBatches.createdAt)).limit(limit);
}
