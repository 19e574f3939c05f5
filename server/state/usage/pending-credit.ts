import type { UsageEvent } from '../../domain/usage/types';
import { isCharged } from './batch-rows';

/**
 * Credit recorded but not yet deducted in the database, per account, and whether a batch
 * could be committing right now: a reader that adds the pending amount to what it reads from
 * the database (an admission base) compares `mark()` before and after its read, and an equal
 * mark means each event was counted once, in the database or here.
 */
export class PendingCredit {
  private byAccount = new Map<number, number>();
  private begun = 0;
  private writing = false;
  private ended: (() => void) | undefined;
  private writeEnd: Promise<void> = Promise.resolve();

  add(e: UsageEvent): void {
    if (isCharged(e) && e.creditUsed > 0) this.byAccount.set(e.accountId, (this.byAccount.get(e.accountId) ?? 0) + e.creditUsed);
  }

  of(accountId: number): number {
    return this.byAccount.get(accountId) ?? 0;
  }

  writeBegan(): void {
    this.writing = true;
    this.begun++;
    this.writeEnd = new Promise<void>((resolve) => (this.ended = resolve));
  }

  writeEnded(): void {
    this.writing = false;
    this.ended?.();
    this.ended = undefined;
  }

  /**
   * A committed batch's charges leave. `nothingLeft` (no event waits to be written) clears
   * what float rounding of many small costs left behind.
   */
  written(charges: ReadonlyMap<number, number>, nothingLeft: boolean): void {
    for (const [accountId, amount] of charges) {
      const left = (this.byAccount.get(accountId) ?? 0) - amount;
      if (left > 1e-9) this.byAccount.set(accountId, left);
      else this.byAccount.delete(accountId);
    }
    if (nothingLeft) this.byAccount.clear();
  }

  /** Undefined while a batch is being written, or `uncertain` (a failed commit awaits its retry). */
  mark(uncertain: boolean): number | undefined {
    return this.writing || uncertain ? undefined : this.begun;
  }

  /** Resolves once the batch being written, if any, has committed or failed. */
  afterWrite(): Promise<void> {
    return this.writeEnd;
  }
}
