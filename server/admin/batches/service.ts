import { and, desc, eq, isNotNull, isNull } from 'drizzle-orm';
import type { Actor } from '../../../contract/services';
import type { BatchService } from '../../../contract/batches/service';
import type { BatchPage, BatchQuery, GatewayBatch } from '../../../contract/batches/schemas';
import { notFound } from '../../../contract/errors';
import type { Db } from '../../adapters/storage/database';
import { gatewayBatches } from '../../adapters/storage/schema';
import { inSubtree } from '../billing/subtree';
import { findAccount, parseSingleIdentifier } from '../accounts/identifiers';
import { asUserParam } from '../billing/user-filter';

export const BATCH_PAGE_SIZE = 50;

type Row = typeof gatewayBatches.$inferSelect;

function view(r: Row): GatewayBatch {
  return {
    id: r.id, account_id: r.accountId, api: r.api === 'anthropic' ? 'anthropic' : 'openai', endpoint: r.endpoint, model: r.model, key_id: r.keyId,
    level: r.level, input_file_id: r.inputFileId, status: r.status, lines: r.lines, completed_lines: r.completedLines, failed_lines: r.failedLines,
    reserved: Number(r.reserved), billed: r.billed === null ? null : Number(r.billed), created_at: r.createdAt.toISOString(),
    expires_at: r.expiresAt.toISOString(), settled_at: r.settledAt ? r.settledAt.toISOString() : null,
  };
}

/** The batches of an account's subtree within its tenant: gateway_batches keeps each one's DNA path. */
export class Batches implements BatchService {
  constructor(private readonly db: Db) {}

  async list({ caller }: Actor, q: BatchQuery): Promise<BatchPage> {
    const account = q.user === undefined ? { dna: caller.dna } : await findAccount(this.db, caller, asUserParam(() => parseSingleIdentifier(q.user!, 'user')), { param: 'user' });
    const limit = q.limit ?? BATCH_PAGE_SIZE;
    const rows = await this.db.select().from(gatewayBatches).where(and(
      eq(gatewayBatches.ownerId, caller.ownerId),
      inSubtree(gatewayBatches.dna, account.dna),
      q.status === 'open' ? isNull(gatewayBatches.settledAt) : q.status === 'settled' ? isNotNull(gatewayBatches.settledAt) : undefined,
    )).orderBy(desc(gatewayBatches.createdAt), desc(gatewayBatches.id)).limit(limit + 1).offset(q.offset ?? 0);
    return { object: 'list', data: rows.slice(0, limit).map(view), has_more: rows.length > limit };
  }

  async get({ caller }: Actor, id: string): Promise<GatewayBatch> {
    const [row] = await this.db.select().from(gatewayBatches).where(and(eq(gatewayBatches.id, id), eq(gatewayBatches.ownerId, caller.ownerId), inSubtree(gatewayBatches.dna, caller.dna)));
    if (!row) throw notFound(`No batch ${id} in this account's subtree`);
    return view(row);
  }
}


