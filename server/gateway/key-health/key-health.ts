import { and, eq } from 'drizzle-orm';
import type { Db } from '../../adapters/storage/database';
import { accounts, providerKeys } from '../../adapters/storage/schema';
import type { KeyPool, PooledKey } from '../../state/provider-keys/key-pool';
import { recordOperation } from '../../state/oplog/oplog';
import { toCaller } from '../../state/accounts/caller';
import type { Logger } from '../../core/log';
import { errorFields } from '../../core/log';
import type { UpstreamHeaders } from '../dispatch/relay';
import { scrub } from '../dispatch/scrub';
import type { Changes } from '../../state/changes/state-changes';
import { LOCAL_BOARD, type HealthBoard, type HealthMark } from './board';
import { KeyCircuits, type CircuitRule } from './circuits';
import type { KeyHealthEvents } from './events';

/** KEY_FAILURE_THRESHOLD 3, KEY_OPEN_MS 15 s, KEY_OPEN_MAX_MS 10 min; probes wait at most UPSTREAM_TIMEOUT_MS. */
export const DEFAULT_CIRCUIT_RULE: CircuitRule = { failureThreshold: 3, openMs: 15_000, openMaxMs: 600_000, probeTimeoutMs: 300_000 };

/** The upstream's words kept in a disabled key's reason. */
const DISABLED_REASON_CHARS = 200;

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

/**
 * What upstream answers do to keys: a 429 puts the key to sleep (Retry-After honoured, else
 * the configured cooldown), and it wakes by itself; a 401/403 disables it for good — written
 * to provider_keys with the reason, logged in the operation log under the Owner, then the
 * pool reloads and the key shows in DisabledKeys. The database work runs off the hot path.
 *
 * Sleep is shared through the board (REDIS_URL): a key put to sleep here is skipped by every
 * instance, and a key woken by hand (re-enabled, new secret) is forgotten by the board too.
 * A disabled key reaches the other instances through the change feed, like an Owner's change.
 *
 * Connection errors, timeouts and 5xx answers go to the circuit breakers (`circuits`): a key
 * (or one model on it) that keeps failing leaves rotation for a growing cool-down, then takes
 * one probe request, and returns when that succeeds.
 */
export class KeyHealth {
  readonly circuits: KeyCircuits;
  private background = new Set<Promise<unknown>>();
  private disabling = new Set<number>();
  /** The Owner of each key put to sleep here or by another instance: a wake clears its shared mark. */
  private sleepers = new Map<number, number>();
  private hearing = false;

  constructor(
    private readonly db: Db,
    private readonly pool: KeyPool,
    private readonly log: Logger,
    private readonly sleepMs: number,
    private readonly maxSleepMs: number,
    private readonly board: HealthBoard = LOCAL_BOARD,
    /** Announces an automatic disable to the other instances (the change feed). */
    private readonly changes?: Pick<Changes, 'announce'>,
    circuitRule: CircuitRule = DEFAULT_CIRCUIT_RULE,
    /** Where disables and circuit openings are told (mail alerts). */
    private readonly events?: KeyHealthEvents,
  ) {
    this.circuits = new KeyCircuits(circuitRule, log, board, events);
    board.onMark((m) => this.hear(m));
    pool.onWake((keyId) => this.woken(keyId));
  }

  /** Puts the key to sleep after an upstream 429; returns for how long. */
  rateLimited(key: PooledKey, headers: UpstreamHeaders | undefined): number {
    const ms = Math.min(this.maxSleepMs, Math.max(100, retryAfterMs(headers) ?? this.sleepMs));
    this.pool.sleep(key.id, ms);
    this.sleepers.set(key.id, key.ownerId);
    this.board.announce({ scope: 'key', ownerId: key.ownerId, id: key.id, state: 'sleeping', ms });
    this.log.info('provider_key_sleeping', { key: key.id, key_level: key.level, owner: key.ownerId, ms });
    return ms;
  }

  /** A mark from another instance (or read from the shared store). */
  private hear(m: HealthMark): void {
    if (m.scope !== 'key' || m.state !== 'sleeping' || m.model !== undefined) return;
    if (m.ms > 0) {
      this.sleepers.set(m.id, m.ownerId);
      this.pool.sleep(m.id, m.ms);
      return;
    }
    this.sleepers.delete(m.id);
    this.hearing = true;
    try {
      this.pool.wake(m.id);
    } finally {
      this.hearing = false;
    }
  }

  private woken(keyId: number): void {
    const ownerId = this.sleepers.get(keyId);
    this.sleepers.delete(keyId);
    // A wake heard from the board is not announced back.
    if (ownerId === undefined || this.hearing) return;
    this.board.announce({ scope: 'key', ownerId, id: keyId, state: 'sleeping', ms: 0 });
  }

  /** Disables the key after an upstream 401/403. */
  refused(key: PooledKey, status: number, detail: string): void {
    if (this.disabling.has(key.id)) return;
    this.disabling.add(key.id);
    this.pool.sleep(key.id, DISABLING_HOLD_MS);
    // Stored, logged and mailed: the same scrubber as the text relayed to clients.
    const reason = `upstream answered ${status}${detail ? `: ${scrub(detail, key, DISABLED_REASON_CHARS)}` : ''}`;
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
      await this.changes?.announce(tx, [{ k: 'provider-keys', owner: key.ownerId }]);
      return true;
    });
    if (changed) {
      this.log.warn('provider_key_disabled', { key: key.id, key_level: key.level, owner: key.ownerId, reason });
      this.events?.emit({ type: 'key_disabled', ownerId: key.ownerId, keyId: key.id, level: key.level, reason, at: now.getTime() });
    }
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
