import { gcraUsed } from '../../limits/gcra';
import { moneyDust, type AdmissionRequest, type CounterView, type RateClaim } from '../store';

/**
 * The shared store's synchronous CounterView: the last values seen of the counters this
 * instance plans requests on. Each batch answers with the values of the counters it touched
 * (batch-script.ts, BATCH); a reservation expiring here leaves them at once.
 */
export class CounterViews implements CounterView {
  private creditView = new Map<string, { spendable: number; reserved: number }>();
  private spendView = new Map<string, { spent: number; reserved: number }>();
  private tatView = new Map<string, number>();
  /** Full Redis key → the view it feeds (filled by the plans). */
  private viewOf = new Map<string, { kind: 'c' | 's' | 'r'; key: string }>();

  /** The counter `key` (full name `fullKey` in Redis) feeds the credit, spend or rate view. */
  follow(fullKey: string, kind: 'c' | 's' | 'r', key: string): void {
    this.viewOf.set(fullKey, { kind, key });
  }

  /** The counters' values after a batch (its last answer): the synchronous CounterView follows them. */
  apply(text: string): void {
    const v = text.split('\0');
    let i = 0;
    for (; i + 2 < v.length && v[i] !== '|'; i += 3) {
      const to = this.viewOf.get(v[i]);
      if (to?.kind === 'c') this.creditView.set(to.key, { spendable: Number(v[i + 1]), reserved: Number(v[i + 2]) });
      else if (to?.kind === 's') this.spendView.set(to.key, { spent: Number(v[i + 1]), reserved: Number(v[i + 2]) });
    }
    for (i++; i + 1 < v.length; i += 2) {
      const to = this.viewOf.get(v[i]);
      if (!to) continue;
      if (v[i + 1] === '') this.tatView.delete(to.key);
      else this.tatView.set(to.key, Number(v[i + 1]));
    }
  }

  /** An expired reservation's money leaves the views at once; Redis is swept by the store. */
  expired(r: AdmissionRequest): void {
    const amount = r.amount > 0 ? r.amount : 0;
    if (r.credit) {
      const v = this.creditView.get(r.credit.key);
      if (v) v.reserved = moneyDust(v.reserved - amount);
    }
    for (const c of r.spend) {
      const v = this.spendView.get(c.key);
      if (v) v.reserved = moneyDust(v.reserved - amount);
    }
  }

  credit(key: string): { spendable: number; reserved: number } | undefined {
    const v = this.creditView.get(key);
    return v && { ...v };
  }

  spend(key: string): { spent: number; reserved: number } | undefined {
    const v = this.spendView.get(key);
    return v && { ...v };
  }

  rateUsed(claim: RateClaim, now: number): number {
    return gcraUsed(this.tatView.get(claim.key) ?? 0, now, claim.windowMs, claim.limit);
  }
}
