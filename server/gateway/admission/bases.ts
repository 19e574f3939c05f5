import { and, eq, gte, like, lt, ne, sum } from 'drizzle-orm';
import type { Db } from '../../adapters/storage/database';
import { usageDaily } from '../../adapters/storage/schema';
import { standingOf } from '../../state/credits/ledger';
import type { UsageEvent, UsageSink } from '../../domain/usage/types';
import type { BaseLoader, SpendClaim } from './store';
import { heldByAccount, heldBySubtree } from '../batches/held';

const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** At most this many accounts are tracked as possibly holding unwritten usage. */
const TRACKED = 50_000;
/** Reads tried while batches keep committing under them, before the cautious value is taken. */
const READS = 3;

/**
 * The admission store's base values from the database, plus this instance's usage recorded
 * but not yet written (the recorder writes in batches): credit from the ledger (cards −
 * overdraft), period spend from usage_daily's subtree rows. The unwritten part is read
 * synchronously, before the query, so a batch written in between would be counted twice (too
 * cautious), never missed (see store.ts, "Loading base values"); such a read is taken again
 * once that batch is done, so a top-up during steady traffic is not met with a 402 for usage
 * counted twice.
 */
export class DatabaseBases implements BaseLoader {
  /** Accounts whose usage may still be in the recorder's buffer, with their tenant and DNA. */
  private recent = new Map<number, { ownerId: number; dna: string }>();

  constructor(private readonly db: Db, private readonly usage: Pick<UsageSink, 'pendingCredit' | 'writeMark' | 'afterWrite'>) {}

  /** Called for every usage event handed to the recorder. */
  noteRecorded(e: Pick<UsageEvent, 'accountId' | 'ownerId' | 'dna' | 'creditUsed'>): void {
    if (!(e.creditUsed > 0) || e.accountId === e.ownerId) return;
    if (this.recent.size >= TRACKED && !this.recent.has(e.accountId)) this.prune();
    this.recent.set(e.accountId, { ownerId: e.ownerId, dna: e.dna });
  }

  credit(accountId: number): Promise<{ spendable: number; epoch: string }> {
    return this.exact(async () => {
      const pending = this.usage.pendingCredit(accountId);
      // Open provider batches hold their worst case until settled, on every instance (gateway/batches).
      // Read before the cards: a batch billed in between is then counted twice, never missed.
      const batches = await heldByAccount(this.db, accountId);
      const s = await standingOf(this.db, accountId);
      return { spendable: s.cards - s.overdraft - pending - batches, epoch: String(s.lastGrant) };
    });
  }

  spend(claim: SpendClaim): Promise<number> {
    return this.exact(() => this.spendOnce(claim));
  }

  /**
   * `read` (pending usage taken synchronously, then the database) again after the batch that
   * may have committed under it, at most READS times; the last is cautious at worst.
   */
  private async exact<T>(read: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const mark = this.usage.writeMark();
      const value = await read();
      if ((mark !== undefined && mark === this.usage.writeMark()) || attempt === READS) return value;
      await this.usage.afterWrite();
    }
  }

  private async spendOnce(claim: SpendClaim): Promise<number> {
    let pending = 0;
    for (const [id, a] of this.recent) {
      const p = this.usage.pendingCredit(id);
      if (p <= 0) this.recent.delete(id);
      else if (a.ownerId === claim.ownerId && a.dna.startsWith(claim.dna)) pending += p;
    }
    // Before usage_daily, as for credit: a batch billed in between counts twice, never not at all.
    const held = await heldBySubtree(this.db, claim.ownerId, claim.dna);
    // DNA paths are digits and dots: no LIKE wildcard to escape.
    const [row] = await this.db.select({ total: sum(usageDaily.creditUsed) }).from(usageDaily).where(and(
      like(usageDaily.dna, `${claim.dna}%`),
      eq(usageDaily.ownerId, claim.ownerId),
      // Root's and Owners' own calls are not charged, so they count against no cap.
      ne(usageDaily.accountId, usageDaily.ownerId),
      gte(usageDaily.day, isoDay(claim.start)),
      lt(usageDaily.day, isoDay(claim.end)),
    ));
    return Number(row?.total ?? 0) + pending + held;
  }

  private prune(): void {
    for (const id of this.recent.keys()) if (this.usage.pendingCredit(id) <= 0) this.recent.delete(id);
    if (this.recent.size >= TRACKED) this.recent.clear();
  }
}

/** The recorder's `record`, telling `bases` about each event it is handed. */
export function trackingSink(usage: Pick<UsageSink, 'record'>, bases: DatabaseBases): Pick<UsageSink, 'record'> {
  return {
    record(e) {
      usage.record(e);
      bases.noteRecorded(e);
    },
  };
}
