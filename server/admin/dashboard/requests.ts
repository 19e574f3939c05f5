import { and, desc, eq, gte, inArray, lt, sql } from 'drizzle-orm';
import type { Caller } from '../../../contract/services';
import { inInstantRange, type RequestPage, type RequestQuery } from '../../../contract/dashboard/schemas';
import { badRequest } from '../../../contract/errors';
import type { Db } from '../../adapters/storage/database';
import { accounts, usageRecords } from '../../adapters/storage/schema';
import { inSubtree } from '../billing/subtree';
import { textProblem } from '../../core/http/storable-text';
import { findAccount, parseSingleIdentifier } from '../accounts/identifiers';
import { asUserParam } from '../billing/user-filter';

export const REQUEST_PAGE_SIZE = 50;

/** `next`/`before`: the last entry's time and request ID, so a page never skips a record that shares its time. */
const encodeCursor = (at: Date, requestId: string | null) => Buffer.from(JSON.stringify([at.toISOString(), requestId ?? ''])).toString('base64url');
function decodeCursor(raw: string): [string, string] {
  try {
    const v = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
    // Exactly what encodeCursor writes: a time the database can hold, a request ID it can store.
    if (Array.isArray(v) && v.length === 2 && typeof v[0] === 'string' && typeof v[1] === 'string'
      && inInstantRange(Date.parse(v[0])) && new Date(v[0]).toISOString() === v[0] && v[1].length <= 200 && textProblem(v[1]) === undefined) return [v[0], v[1]];
  } catch {
    // fall through
  }
  throw badRequest('before: not a cursor this API gave (use `next` of the previous page)', 'invalid_cursor');
}

/**
 * A page of one account's usage records (or, with `scope: tree`, its whole subtree's), newest
 * first, through usage_records' (account, time) index in each day partition: the first page
 * reads `limit` rows from the newest partitions.
 */
export async function readRequests(db: Db, caller: Caller, q: RequestQuery): Promise<RequestPage> {
  const account = q.user === undefined
    ? { id: caller.id, dna: caller.dna }
    : await findAccount(db, caller, asUserParam(() => parseSingleIdentifier(q.user!, 'user')), { param: 'user' });
  // The whole tree: the accounts at or below it (DNA range, through the accounts' DNA index).
  const whose = q.scope === 'tree'
    ? inArray(usageRecords.accountId, db.select({ id: accounts.id }).from(accounts).where(inSubtree(accounts.dna, account.dna)))
    : eq(usageRecords.accountId, account.id);
  const limit = q.limit ?? REQUEST_PAGE_SIZE;
  const cursor = q.before === undefined ? undefined : decodeCursor(q.before);
  const rows = await db.select().from(usageRecords).where(and(
    whose,
    q.since !== undefined ? gte(usageRecords.createdAt, new Date(q.since)) : undefined,
    q.until !== undefined ? lt(usageRecords.createdAt, new Date(q.until)) : undefined,
    q.model !== undefined ? eq(usageRecords.model, q.model) : undefined,
    q.status !== undefined ? eq(usageRecords.status, q.status) : undefined,
    q.request_id !== undefined ? eq(usageRecords.requestId, q.request_id) : undefined,
    cursor ? sql`(${usageRecords.createdAt}, coalesce(${usageRecords.requestId}, '')) < (${cursor[0]}::timestamptz, ${cursor[1]})` : undefined,
  )).orderBy(desc(usageRecords.createdAt), desc(sql`coalesce(${usageRecords.requestId}, '')`)).limit(limit + 1);
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    object: 'list',
    data: page.map((r) => ({
      account_id: r.accountId, request_id: r.requestId, created_at: r.createdAt.toISOString(), model: r.model, endpoint: r.endpoint, level: r.level,
      prompt: r.prompt, completion: r.completion, reasoning: r.reasoning, cached: r.cached, credit_used: Number(r.creditUsed), status: r.status === 'abnormal' ? 'abnormal' : 'ok',
      duration_ms: r.durationMs, first_byte_ms: r.firstByteMs, key_kind: r.keyKind, ...(r.units ? { units: r.units } : {}),
      ...(r.droppedTools ? { dropped_tools: r.droppedTools.split(',') } : {}),
      ...(r.batchId ? { batch_id: r.batchId, batch_lines: r.batchLines ?? 0 } : {}),
    })),
    has_more: rows.length > limit,
    next: rows.length > limit && last ? encodeCursor(last.createdAt, last.requestId) : null,
  };
}
