import { and, count, desc, eq, or, sql, type SQL } from 'drizzle-orm';
import type { Caller } from '../../../contract/services';
import type { LogPage, LogQuery } from '../../../contract/dashboard/schemas';
import type { Db } from '../../adapters/storage/database';
import { accounts, operationLogs } from '../../adapters/storage/schema';
import { inSubtree } from '../billing/subtree';

export const LOG_PAGE_SIZE = 24;

/**
 * What a caller may read of the operation log: entries made by itself or by any account below
 * it (operator DNA in its subtree), and entries whose target is itself or an account below it
 * (a parent's top-up, say). An Owner thus reads its whole tenant's log and Root everything.
 * Owner-area entries (keys, configuration) target the Owner, so accounts below never see them.
 */
export function visibleTo(caller: Caller): SQL {
  return or(
    inSubtree(operationLogs.operatorDna, caller.dna),
    sql`${operationLogs.targetId} in (select ${accounts.id} from ${accounts} where ${inSubtree(accounts.dna, caller.dna)})`,
  )!;
}

export async function readLogs(db: Db, caller: Caller, q: LogQuery): Promise<LogPage> {
  const page = q.page ?? 1;
  const size = q.size ?? LOG_PAGE_SIZE;
  const where = and(
    visibleTo(caller),
    q.action !== undefined ? eq(operationLogs.action, q.action) : undefined,
    q.target_id !== undefined ? eq(operationLogs.targetId, q.target_id) : undefined,
    q.status !== undefined ? eq(operationLogs.status, q.status) : undefined,
  );
  const [[{ n }], rows] = await Promise.all([
    db.select({ n: count() }).from(operationLogs).where(where),
    db.select().from(operationLogs).where(where).orderBy(desc(operationLogs.id)).limit(size).offset((page - 1) * size),
  ]);
  return {
    logs: rows.map((r) => ({
      id: r.id, action: r.action, operator_id: r.operatorId, target_id: r.targetId, details: r.details, ip: r.ip, status: r.status, created_at: r.createdAt.toISOString(),
    })),
    total: n,
    page,
    size,
    has_more: page * size < n,
  };
}
