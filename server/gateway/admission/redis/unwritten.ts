import type { RedisLink } from '../../../adapters/redis/link';
import { Script } from '../../../adapters/redis/script';
import type { InstancePresence } from '../../../adapters/redis/presence';
import { UNWRITTEN } from './scripts';
import type { SharedEpoch } from './epoch';
import { MONEY_EPSILON, sameClaimSet, type AdmissionRequest, type CreditClaim, type SpendClaim } from '../store';

/** Usage settled here and not yet written to the database, oldest first (the recorder writes in order). */
interface Unwritten {
  cost: number;
  keys: string[];
  /** The claims the keys came from: a charge on the same ones joins this entry. */
  credit: CreditClaim;
  spend: readonly SpendClaim[];
}

const unwrittenScript = new Script(UNWRITTEN);


/**
 * This instance's charges settled in Redis and not yet written to the database. Each money
 * counter holds them as this instance's `u:<instance>` part (scripts.ts), so a base that
 * another instance loads meanwhile still counts them; they leave it as the recorder writes them.
 */
export class UnwrittenUsage {
  private unwritten = new Map<number, Unwritten[]>();
  /** Keys holding a `u:<this instance>` field, so a resync can clear those with nothing left. */
  private unwrittenKeys = new Set<string>();

  constructor(private readonly link: RedisLink, private readonly epoch: SharedEpoch, private readonly presence: InstancePresence) {}

  /**
   * Remembers a charge until the recorder reports it written (see `written`). Charges in a row on
   * the same counters are one entry: `written` takes from the oldest, so the sum is the same.
   */
  note(r: AdmissionRequest, cost: number): void {
    let list = this.unwritten.get(r.credit!.accountId);
    if (!list) this.unwritten.set(r.credit!.accountId, (list = []));
    const last = list[list.length - 1];
    if (last && sameClaimSet(last, r)) {
      last.cost += cost;
      return;
    }
    const keys = [r.credit!.key, ...r.spend.map((c) => c.key)];
    list.push({ cost, keys, credit: r.credit!, spend: r.spend });
    for (const key of keys) this.unwrittenKeys.add(key);
  }

  /**
   * These charges (per account) are now in the database: what each counter stops holding as this
   * instance's unwritten usage. The recorder writes in order, so an account's charges are its
   * oldest unwritten ones.
   */
  written(charges: ReadonlyMap<number, number>): Map<string, number> {
    const byKey = new Map<string, number>();
    for (const [accountId, charged] of charges) {
      const list = this.unwritten.get(accountId);
      if (!list) continue;
      let left = charged;
      while (list.length > 0 && left > MONEY_EPSILON) {
        const head = list[0];
        const take = Math.min(head.cost, left);
        for (const key of head.keys) byKey.set(key, (byKey.get(key) ?? 0) + take);
        left -= take;
        head.cost -= take;
        if (head.cost <= MONEY_EPSILON) list.shift();
      }
      if (list.length === 0) this.unwritten.delete(accountId);
    }
    return byKey;
  }

  /** Lowers this instance's unwritten part of one counter by a written amount. */
  lower(key: string, amount: number): Promise<unknown> {
    return unwrittenScript.run(this.link.client, [this.epoch.key(key)], [this.presence.id, amount, '-']);
  }

  /** Writes this instance's unwritten usage per counter in full (after an outage or a restart). */
  async resync(): Promise<void> {
    const sums = new Map<string, number>();
    for (const list of this.unwritten.values()) for (const u of list) for (const key of u.keys) sums.set(key, (sums.get(key) ?? 0) + u.cost);
    const ops: Promise<unknown>[] = [];
    for (const key of this.unwrittenKeys) {
      ops.push(unwrittenScript.run(this.link.client, [this.epoch.key(key)], [this.presence.id, sums.get(key) ?? 0, '=']));
      if (!sums.has(key)) this.unwrittenKeys.delete(key);
    }
    await Promise.all(ops);
  }
}
