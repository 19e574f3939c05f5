import { and, eq } from 'drizzle-orm';
import type { Db } from '../../adapters/storage/database';
import { accounts, providerKeys } from '../../adapters/storage/schema';
import type { KeyPool, PooledKey } from '../../state/provider-keys/key-pool';
import { recordOperation } from '../../state/oplog/oplog';
import { toCaller } from '../../state/accounts/caller';
import type { Logger } from '../../core/log';
import { errorFields } from '../../core/log';
import type { UpstreamHeaders } from '../dispatch/relay';

/** How long a key that upstream refused is kept out of rotation until the reload drops it. */
const DISABLING_HOLD_MS = 10 * 60_000;

const header = (h: UpstreamHeaders | undefined, name: string): string | undefined => {
  const v = h?.[name];
  return Array.isArray(v) ? v[0] : v;
};

/** `retry-after-ms`, else `retry-after` in seconds or as an HTTP date; null when absent or unreadable. */
export function retryAfterMs(h: UpstreamHeaders | undefined, now = Date.now()): number | null {
  const ms = header(h, 'retry-after-ms');
  if (ms && /^\d+(\.\d+)?$/.test(ms.trim())) return Number(ms);
  const ra = header(h, 'retry-after')?.trim();
  if (!ra) return null;
  if (/^\d+(\.\d+)?$/.test(ra)) return Number(ra) * 1000;
  const at = Date.parse(ra);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/** Removes anything key-like from an upstream's error text before it is stored or logged. */
export function redact(text: string, secret: string): string {
  let out = secret ? text.split(secret).join('[key]') : text;
  out = out.replace(/\b(sk|pk|rk|key|AIza)[-_A-Za-z0-9*]{8,}/g, '[key]');
  return out.replace(/\s+/g, ' ').trim().slice(0, 200);
}

/**
 * What upstream answers do to keys: a 429 puts the key to sleep (Retry-After honoured, else
 * the configured cooldown), and it wakes by itself; a 401/403 disables it for good — written
 * to provider_keys with the reason, logged in the operation log under the Owner, then the
 * pool reloads and the key shows in DisabledKeys. The database work runs off the hot path.
 */
export class KeyHealth {
  private background = new Set<Promise<unknown>>();
  private disabling = new Set<number>();

  constructor(
    private readonly db: Db,
    private readonly pool: KeyPool,
    private readonly log: Logger,
    private readonly sleepMs: number,
    private readonly maxSleepMs: number,
  ) {}

  /** Puts the key to sleep after an upstream 429; returns for how long. */
  rateLimited(key: PooledKey, headers: UpstreamHeaders | undefined): number {
    const ms = Math.min(this.maxSleepMs, Math.max(100, retryAfterMs(headers) ?? this.sleepMs));
    this.pool.sleep(key.id, ms);
    this.log.info('provider_key_sleeping', { key: key.id, level: key.level, owner: key.ownerId, ms });
    return ms;
  }

  /** Disables the key after an upstream 401/403. */
  refused(key: PooledKey, status: number, detail: string): void {
    if (this.disabling.has(key.id)) return;
    this.disabling.add(key.id);
    this.pool.sleep(key.id, DISABLING_HOLD_MS);
    const reason = `upstream answered ${status}${detail ? `: ${redact(detail, key.secret)}` : ''}`;
    this.track(this.disable(key, reason)
      .catch((err) => this.log.error('provider_key_disable_failed', { key: key.id, ...errorFields(err) }))
      .finally(() => this.disabling.delete(key.id)));
  }

  private async disable(key: PooledKey, reason: string): Promise<void> {
    const now = new Date();
    const changed = await this.db.transaction(async (tx) => {
      const rows = await tx.update(providerKeys)
        .set({ status: false, disabledReason: reason, disabledAt: now, updatedAt: now })
        .where(and(eq(providerKeys.id, key.id), eq(providerKeys.status, true)))
        .returning({ id: providerKeys.id });
      if (rows.length === 0) return false;
      const [owner] = await tx.select().from(accounts).where(eq(accounts.id, key.ownerId));
      if (owner) {
        // The gateway acts for the Owner whose key it is; the action name tells it was automatic.
        await recordOperation(tx, { caller: toCaller(owner), ip: '' }, {
          action: 'auto_disable_key',
          targetId: key.ownerId,
          details: { key: key.id, name: key.name, level: key.level, provider: key.provider, reason, by: 'gateway' },
          status: 'success',
        });
      }
      return true;
    });
    if (changed) this.log.warn('provider_key_disabled', { key: key.id, level: key.level, owner: key.ownerId, reason });
    await this.pool.reload(key.ownerId);
  }

  private track(p: Promise<unknown>): void {
    this.background.add(p);
    p.finally(() => this.background.delete(p));
  }

  /** Waits for pending key writes (shutdown, tests). */
  async settle(): Promise<void> {
    while (this.background.size) await Promise.allSettled([...this.background]);
  }
}
