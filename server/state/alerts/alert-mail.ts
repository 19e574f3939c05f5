import { setTimeout as sleep } from 'node:timers/promises';
import { eq } from 'drizzle-orm';
import type { Db } from '../../adapters/storage/database';
import { accountAlerts, accounts, providerKeys } from '../../adapters/storage/schema';
import { PURPOSE, type Vault } from '../../adapters/security/crypto';
import { DEFAULT_SMTP_PORT, MailError, sendMail, type MailMessage, type MailServer } from '../../adapters/mail/mailer';
import type { Logger } from '../../core/log';
import { errorFields } from '../../core/log';
import type { OwnerConfigStore } from '../owner-config/store';
import type { AccountAlert } from './alerts';

/** A provider key's or a Level's trouble, as the composition root hands it over from key health. */
export type HealthAlert =
  | { kind: 'key_disabled'; ownerId: number; keyId: number; level: number; reason: string; at: number }
  | { kind: 'key_open'; ownerId: number; keyId: number; level: number; model: string | null; outMs: number; reason: string; at: number }
  | { kind: 'level_switched'; ownerId: number; level: number; at: number };

export type Send = (server: MailServer, message: MailMessage, signal?: AbortSignal) => Promise<{ accepted: string[] }>;

/** What a mail under way is about: named when shutdown gives it up. */
interface Pending {
  kind: string;
  owner: number;
  account?: number;
  key?: number;
  level?: number;
}

export interface AlertMailDeps {
  db: Db;
  config: Pick<OwnerConfigStore, 'values'>;
  vault: Vault;
  log: Logger;
  send?: Send;
  /** Pause between attempts of a send that failed on the way (server away); tests shorten it. */
  retryMs?: number;
}

/** Attempts per mail when the server cannot be reached; a refusal is not retried. */
const ATTEMPTS = 3;

const day = (at: number) => new Date(at).toISOString().slice(0, 10).replaceAll('-', '');
const usd = (n: number) => `$${n.toFixed(2)}`;
const minutes = (ms: number) => `${Math.max(1, Math.round(ms / 60_000))} min`;

/**
 * Mail alerts through each Owner's stored mail settings.
 *
 * Account alerts (SoftLimit, low balance) arrive already once per account, kind and period
 * (`AccountAlerts`); they go to the account's BillingEmail (else its Email) and to its Owner.
 * Key and Level alerts go to the Owner alone, at most once per key (or Level), kind and UTC
 * day: the same `account_alerts` row under the Owner's account makes it once across
 * instances and restarts. An Owner without EMAIL_SMTP gets no mail (one info line says so).
 * The Owner's address is XAI_MAIL, else the Owner account's BillingEmail or Email; mail is
 * sent from XAI_MAIL, else EMAIL_AUTH, else that address.
 *
 * Shutdown never waits on mail (`close`): what is still under way is given up and named in
 * one log line, and is not sent at the next start (see decisions.md).
 */
export class AlertMail {
  private inFlight = new Map<Promise<unknown>, Pending>();
  private readonly send: Send;
  /** Aborted by `close`: every send under way ends at once, and no retry waits. */
  private readonly stopping = new AbortController();

  constructor(private readonly d: AlertMailDeps) {
    this.send = d.send ?? sendMail;
  }

  /** An account alert raised on this instance: mailed once. */
  accountAlert(alert: AccountAlert): void {
    this.track({ kind: alert.kind, owner: alert.ownerId, account: alert.accountId }, () => this.mailAccountAlert(alert));
  }

  /** A key health event: mailed unless this key (or Level) and kind were mailed today already. */
  healthAlert(alert: HealthAlert): void {
    const about = alert.kind === 'level_switched' ? { level: alert.level } : { key: alert.keyId };
    this.track({ kind: alert.kind, owner: alert.ownerId, ...about }, () => this.mailHealthAlert(alert));
  }

  /**
   * A test message to `to` (default: the Owner's address) with the stored settings, answered
   * with the addresses the server accepted; a MailError when the server refused or was away,
   * null when no EMAIL_SMTP is stored.
   */
  async testMail(ownerId: number, to?: string): Promise<{ to: string[]; accepted: string[] } | null> {
    const setup = await this.setup(ownerId);
    if (!setup) return null;
    const recipients = [to ?? setup.ownerAddress];
    if (!recipients[0]) throw new MailError('mail_rejected', 'No address to send to: set XAI_MAIL, or name the recipient', false);
    const { accepted } = await this.send(setup.server, {
      to: recipients,
      subject: 'Switchyard test mail',
      text: `This is a test mail from Switchyard for the Owner account ${setup.ownerName} (#${ownerId}).\n\n`
        + 'Alerts (SoftLimit reached, balance low, a provider key disabled or out of rotation for long, a Level switched over) are sent with these settings.\n',
    });
    return { to: recipients, accepted };
  }

  /** Resolves when every mail under way has been sent or given up (tests). */
  async settled(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight.keys()]);
  }

  /**
   * Shutdown: gives up every mail under way at once (a mail server that does not answer would
   * hold the process for its timeouts) and names them in one `alert_mail_dropped` line. Their
   * account_alerts rows stay, so they are not raised again in their period: a send cut short
   * may already have been accepted by the server, and sending it again at the next start could
   * mail it twice. Alerts raised after this are dropped the same way.
   */
  close(): void {
    if (this.stopping.signal.aborted) return;
    this.stopping.abort();
    if (this.inFlight.size > 0) this.dropped([...this.inFlight.values()]);
  }

  private dropped(alerts: Pending[]): void {
    this.d.log.warn('alert_mail_dropped', { count: alerts.length, alerts });
  }

  private track(about: Pending, mail: () => Promise<void>): void {
    if (this.stopping.signal.aborted) return this.dropped([about]);
    // Once stopping, what fails is a mail given up, already named in the dropped line.
    const q = mail().catch((err) => {
      if (!this.stopping.signal.aborted) this.d.log.error('alert_mail_failed', errorFields(err));
    });
    this.inFlight.set(q, about);
    void q.finally(() => this.inFlight.delete(q));
  }

  private async mailAccountAlert(a: AccountAlert): Promise<void> {
    const [account] = await this.d.db.select({ name: accounts.name, alias: accounts.alias, email: accounts.email, billingEmail: accounts.billingEmail })
      .from(accounts).where(eq(accounts.id, a.accountId));
    if (!account) return;
    const who = `${account.alias || account.name} (#${a.accountId})`;
    const message = a.kind === 'soft_limit'
      ? {
        subject: `SoftLimit reached: ${who}`,
        text: `The account ${who} has used ${usd(a.value)} this month (UTC), reaching its SoftLimit of ${usd(a.threshold)}.\n\n`
          + 'Nothing is refused at the SoftLimit; calls are refused only at the HardLimit.\n',
      }
      : {
        subject: `Balance low: ${who}`,
        text: `The balance of the account ${who} is ${usd(a.value)}, below ${usd(a.threshold)}.\n\n`
          + 'Calls are refused once it falls below the minimum balance; a grant of credit ends this alert.\n',
      };
    await this.deliver(a.ownerId, `${a.kind}`, [account.billingEmail || account.email], message);
  }

  private async mailHealthAlert(h: HealthAlert): Promise<void> {
    const scope = h.kind === 'level_switched' ? `l${h.level}` : `k${h.keyId}`;
    if (!(await this.once(h.ownerId, h.kind, `d${day(h.at)}:${scope}`))) return;
    let message: Omit<MailMessage, 'to'>;
    if (h.kind === 'level_switched') {
      message = {
        subject: `Level ${h.level} switched over`,
        text: `Level ${h.level} had more abnormal upstream results than SWITCH_OVER_THRESHOLD within one window, `
          + 'so its traffic goes to its backup Level (SWITCH_OVER) until a window passes without one.\n',
      };
    } else {
      const [key] = await this.d.db.select({ name: providerKeys.name }).from(providerKeys).where(eq(providerKeys.id, h.keyId));
      const name = `"${key?.name ?? ''}" (#${h.keyId}, Level ${h.level})`;
      message = h.kind === 'key_disabled'
        ? {
          subject: `Provider key disabled: ${key?.name ?? `#${h.keyId}`}`,
          text: `The provider key ${name} was disabled: ${h.reason}.\n\n`
            + 'The upstream refused the key itself; it stays out of rotation until it is enabled again (a new SecretKey, or Status true).\n',
        }
        : {
          subject: `Provider key out of rotation: ${key?.name ?? `#${h.keyId}`}`,
          text: `The provider key ${name}${h.model ? ` for the model ${h.model}` : ''} has been out of rotation for ${minutes(h.outMs)}: `
            + `its probe requests keep failing (last: ${h.reason}).\n\nIt returns by itself when a probe succeeds.\n`,
        };
    }
    await this.deliver(h.ownerId, h.kind, [], message);
  }

  /** Inserts the (Owner, kind, period) row; only the insert that lands mails. */
  private async once(ownerId: number, kind: string, period: string): Promise<boolean> {
    const rows = await this.d.db.insert(accountAlerts).values({ accountId: ownerId, kind, period })
      .onConflictDoNothing().returning({ at: accountAlerts.raisedAt });
    return rows.length > 0;
  }

  private async deliver(ownerId: number, kind: string, accountAddresses: string[], message: Omit<MailMessage, 'to'>): Promise<void> {
    const setup = await this.setup(ownerId);
    if (!setup) {
      this.d.log.info('alert_mail_not_configured', { kind, owner: ownerId });
      return;
    }
    const to = [...new Set([...accountAddresses, setup.ownerAddress].filter(Boolean).map((a) => a.toLowerCase()))];
    const signal = this.stopping.signal;
    for (let attempt = 1; ; attempt++) {
      try {
        await this.send(setup.server, { ...message, to }, signal);
        this.d.log.info('alert_mail_sent', { kind, owner: ownerId, recipients: to.length });
        return;
      } catch (err) {
        if (signal.aborted) return;
        const transient = err instanceof MailError ? err.transient : false;
        if (!transient || attempt >= ATTEMPTS) {
          this.d.log.warn('alert_mail_failed', { kind, owner: ownerId, attempts: attempt, code: err instanceof MailError ? err.code : 'mail_failed', message: err instanceof MailError ? err.message : 'Sending the mail failed' });
          return;
        }
        // Rejects at once when shutdown aborts the wait; track() takes it as a mail given up.
        await sleep(this.d.retryMs ?? 5_000, undefined, { signal });
      }
    }
  }

  /** The Owner's mail server and address from its stored configuration; null without EMAIL_SMTP. */
  private async setup(ownerId: number): Promise<{ server: MailServer; ownerAddress: string; ownerName: string } | null> {
    const v = await this.d.config.values(ownerId);
    const host = v.get('EMAIL_SMTP');
    if (!host) return null;
    const [owner] = await this.d.db.select({ name: accounts.name, email: accounts.email, billingEmail: accounts.billingEmail }).from(accounts).where(eq(accounts.id, ownerId));
    const ownerAddress = v.get('XAI_MAIL') || owner?.billingEmail || owner?.email || '';
    const sealed = v.get('EMAIL_PASS');
    const user = v.get('EMAIL_AUTH') || null;
    return {
      server: {
        host,
        port: Number(v.get('EMAIL_PORT') || DEFAULT_SMTP_PORT),
        user,
        pass: sealed ? this.d.vault.decrypt(PURPOSE.configSecret, sealed) : null,
        from: v.get('XAI_MAIL') || user || ownerAddress,
      },
      ownerAddress,
      ownerName: owner?.name ?? String(ownerId),
    };
  }
}
