import type { Db } from '../../adapters/storage/database';
import { balanceOf } from '../../state/credits/ledger';
import type { UsageSink } from '../../domain/usage/types';
import type { AccountCache } from '../../state/accounts/account-cache';
import type { Logger } from '../../core/log';
import { errorFields } from '../../core/log';

interface Entry {
  /** Ledger balance minus the recorder's pending credit, at load time. */
  base: number;
  /** `spent` of the account when the load started. */
  spentAtLoad: number;
  loadedAt: number;
}

/**
 * Spendable balances in memory, so the proxy's balance check never waits on the database:
 * loaded on first use (ledger balance minus usage not yet deducted), lowered as this proxy
 * records usage, dropped when the account changes (a top-up), and re-read in the background
 * every `refreshMs` to follow expiries and other instances.
 */
export class Balances {
  private entries = new Map<number, Entry>();
  /** Credit this instance recorded per account since start; only grows. */
  private spent = new Map<number, number>();
  private loading = new Map<number, Promise<number>>();
  private generation = 0;

  constructor(
    private readonly db: Db,
    private readonly usage: UsageSink,
    private readonly refreshMs: number,
    cache: AccountCache,
    private readonly log: Logger,
  ) {
    cache.onInvalidate((id) => {
      this.generation++;
      if (id === null) this.entries.clear();
      else this.entries.delete(id);
    });
  }

  private value(id: number, e: Entry): number {
    return e.base - ((this.spent.get(id) ?? 0) - e.spentAtLoad);
  }

  /** Synchronous hit path; a stale entry still answers and is refreshed in the background. */
  peek(accountId: number, now = Date.now()): number | undefined {
    const e = this.entries.get(accountId);
    if (!e) return undefined;
    if (now - e.loadedAt > this.refreshMs && !this.loading.has(accountId)) {
      this.load(accountId).catch((err) => this.log.warn('balance_refresh_failed', { account: accountId, ...errorFields(err) }));
    }
    return this.value(accountId, e);
  }

  load(accountId: number): Promise<number> {
    let p = this.loading.get(accountId);
    if (!p) {
      p = this.read(accountId).finally(() => this.loading.delete(accountId));
      this.loading.set(accountId, p);
    }
    return p;
  }

  private async read(accountId: number): Promise<number> {
    const generation = this.generation;
    const spentAtLoad = this.spent.get(accountId) ?? 0;
    // Pending first, ledger second: a flush in between is then counted twice (too low),
    // never missed (too high), and the next refresh corrects it.
    const pending = this.usage.pendingCredit(accountId);
    const ledger = await balanceOf(this.db, accountId);
    const e: Entry = { base: ledger - pending, spentAtLoad, loadedAt: Date.now() };
    if (generation === this.generation) this.entries.set(accountId, e);
    return this.value(accountId, e);
  }

  /** Lowers the balance by what was just recorded for the account. */
  spend(accountId: number, amount: number): void {
    if (amount > 0) this.spent.set(accountId, (this.spent.get(accountId) ?? 0) + amount);
  }
}
