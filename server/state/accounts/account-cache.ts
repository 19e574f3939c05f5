import { eq } from 'drizzle-orm';
import type { Db } from '../../adapters/storage/database';
import { accountKeys, accounts } from '../../adapters/storage/schema';
import { hashKey } from '../../adapters/security/crypto';

export type AccountRow = typeof accounts.$inferSelect;

/**
 * API key → account, in memory. Every request (the proxy's included) authenticates here, so
 * the database is asked only on a miss. Any change to an account or its key invalidates it.
 */
export class AccountCache {
  private byHash = new Map<string, AccountRow>();
  private hashesById = new Map<number, Set<string>>();
  private generation = 0;

  constructor(private readonly db: Db) {}

  /** Synchronous hit path for the proxy; undefined means "ask `resolve`". */
  peek(apiKey: string): AccountRow | undefined {
    return this.byHash.get(hashKey(apiKey));
  }

  async resolve(apiKey: string): Promise<AccountRow | null> {
    const hash = hashKey(apiKey);
    const hit = this.byHash.get(hash);
    if (hit) return hit;
    const generation = this.generation;
    const [row] = await this.db
      .select({ account: accounts })
      .from(accountKeys)
      .innerJoin(accounts, eq(accountKeys.accountId, accounts.id))
      .where(eq(accountKeys.keyHash, hash))
      .limit(1);
    if (!row) return null;
    // An invalidation that raced with this read must win: do not cache a stale row.
    if (generation === this.generation) {
      this.byHash.set(hash, row.account);
      let set = this.hashesById.get(row.account.id);
      if (!set) this.hashesById.set(row.account.id, (set = new Set()));
      set.add(hash);
    }
    return row.account;
  }

  invalidateAccount(id: number): void {
    this.generation++;
    for (const h of this.hashesById.get(id) ?? []) this.byHash.delete(h);
    this.hashesById.delete(id);
    for (const l of this.invalidationListeners) l(id);
  }

  invalidateAll(): void {
    this.generation++;
    this.byHash.clear();
    this.hashesById.clear();
    for (const l of this.invalidationListeners) l(null);
  }

  private invalidationListeners: ((accountId: number | null) => void)[] = [];

  /** Tells caches derived from account rows (the proxy's profiles and balances) to drop them; null = all. */
  onInvalidate(listener: (accountId: number | null) => void): void {
    this.invalidationListeners.push(listener);
  }
}
