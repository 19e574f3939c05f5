import type { Db } from '../../adapters/storage/database';
import { accountAlerts } from '../../adapters/storage/schema';
import type { Logger } from '../../core/log';
import { errorFields } from '../../core/log';

export type AlertKind = 'soft_limit' | 'low_balance';

/** An account alert, raised once per account, kind and period. */
export interface AccountAlert {
  kind: AlertKind;
  accountId: number;
  ownerId: number;
  /** `m202611` for SoftLimit (the calendar month); the latest grant's ID for low balance. */
  period: string;
  /** Month's spend (SoftLimit) or spendable credit (low balance) when it was raised. */
  value: number;
  threshold: number;
  at: Date;
}

export type AlertListener = (alert: AccountAlert) => void;

/** At most this many (account, kind, period) triples are remembered as already raised. */
const REMEMBERED = 100_000;

/**
 * Account alerts as an event source. `raise` may be called many times for one alert (each
 * settle past a threshold, each instance); the account_alerts primary key makes it once
 * across instances and restarts (INSERT … ON CONFLICT DO NOTHING RETURNING), and only the
 * call that inserted the row tells the listeners and logs it. A failed insert is forgotten,
 * so the next crossing tries again.
 */
export class AccountAlerts {
  private listeners: AlertListener[] = [];
  /** Triples already raised or being raised here: no database round trip for them. */
  private seen = new Set<string>();
  private inFlight = new Set<Promise<unknown>>();

  constructor(private readonly db: Db, private readonly log: Logger) {}

  /** Calls `listener` for every alert this instance raises; returns the unsubscribe function. */
  subscribe(listener: AlertListener): () => void {
    this.listeners.push(listener);
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    };
  }

  /** Raises the alert unless it was raised for this period already; resolves to whether this call raised it. */
  raise(alert: Omit<AccountAlert, 'at'>): Promise<boolean> {
    const key = `${alert.accountId}|${alert.kind}|${alert.period}`;
    if (this.seen.has(key)) return Promise.resolve(false);
    if (this.seen.size >= REMEMBERED) this.seen.clear();
    this.seen.add(key);
    const p = this.insert(alert, key);
    this.inFlight.add(p);
    return p.finally(() => this.inFlight.delete(p));
  }

  private async insert(alert: Omit<AccountAlert, 'at'>, key: string): Promise<boolean> {
    try {
      const rows = await this.db.insert(accountAlerts).values({ accountId: alert.accountId, kind: alert.kind, period: alert.period })
        .onConflictDoNothing().returning({ at: accountAlerts.raisedAt });
      if (rows.length === 0) return false;
      const raised: AccountAlert = { ...alert, at: rows[0].at };
      this.log.info('account_alert', { kind: raised.kind, account: raised.accountId, owner: raised.ownerId, period: raised.period, value: raised.value, threshold: raised.threshold });
      for (const l of this.listeners) {
        try {
          l(raised);
        } catch (err) {
          this.log.error('account_alert_listener_failed', { kind: raised.kind, account: raised.accountId, ...errorFields(err) });
        }
      }
      return true;
    } catch (err) {
      this.seen.delete(key);
      this.log.warn('account_alert_failed', { kind: alert.kind, account: alert.accountId, ...errorFields(err) });
      return false;
    }
  }

  /** Resolves when every alert being raised has been written (tests, shutdown). */
  async settled(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }
}
