import { and, eq, isNull, like, ne, sum } from 'drizzle-orm';
import type { Db } from '../../adapters/storage/database';
import { gatewayBatches } from '../../adapters/storage/schema';

/**
 * What open provider batches hold, as the database keeps it (gateway_batches.reserved until the
 * batch is settled): part of every admission base (admission/bases.ts), so a batch's
 * reservation holds on every instance, after a restart and for its whole 24 hours, however
 * often the bases are read again.
 */

/** An account's open batches' reservations: taken off its spendable credit. */
export async function heldByAccount(db: Db, accountId: number): Promise<number> {
  const [row] = await db.select({ total: sum(gatewayBatches.reserved) }).from(gatewayBatches)
    .where(and(eq(gatewayBatches.accountId, accountId), isNull(gatewayBatches.settledAt)));
  return Number(row?.total ?? 0);
}

/** A subtree's open batches' reservations (charged accounts only): counted as spent by its spend caps until settled. */
export async function heldBySubtree(db: Db, ownerId: number, dna: string): Promise<number> {
  // DNA paths are digits and dots: no LIKE wildcard to escape.
  const [row] = await db.select({ total: sum(gatewayBatches.reserved) }).from(gatewayBatches).where(and(
    like(gatewayBatches.dna, `${dna}%`),
    eq(gatewayBatches.ownerId, ownerId),
    ne(gatewayBatches.accountId, gatewayBatches.ownerId),
    isNull(gatewayBatches.settledAt),
  ));
  return Number(row?.total ?? 0);
}
