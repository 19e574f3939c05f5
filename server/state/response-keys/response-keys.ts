import { and, eq, gt, lt } from 'drizzle-orm';
import type { Db } from '../../adapters/storage/database';
import { responseKeys } from '../../adapters/storage/schema';
import type { RedisLink } from '../../adapters/redis/link';
import type { Logger } from '../../core/log';
import { errorFields } from '../../core/log';

/**
 * Which provider key created each stored Responses API response. A response lives in the
 * provider organization of the key that created it, so a call continuing it
 * (`previous_response_id`) must reach that key, whichever instance it lands on: the pairs are
 * shared through Redis with REDIS_URL, through the database's `response_keys` table without,
 * and kept for RESPONSE_KEY_TTL_MS (a provider keeps a stored response 30 days). This
 * instance's own pairs are also held in memory, so its next call needs no round trip.
 */
export const RESPONSE_KEY_TTL_MS = 30 * 86_400_000;

/** Most pairs held in memory; the oldest go first (the shared store still has them). */
const LOCAL_MAX = 10_000;
const PURGE_EVERY_MS = 3_600_000;

export interface ResponseKeys {
  /** Notes that `keyId` created `responseId`; settles once the other instances can read it (or sharing failed, logged). */
  remember(ownerId: number, responseId: string, keyId: number): Promise<void>;
  /** The key that created the response, or null when none is known (never noted, or expired). */
  keyOf(ownerId: number, responseId: string): number | null | Promise<number | null>;
  /** Waits for the writes under way (shutdown, tests). */
  settle(): Promise<void>;
}

/** Where the pairs are shared between instances. */
export interface SharedResponseKeys {
  put(ownerId: number, responseId: string, keyId: number, ttlMs: number): Promise<void>;
  get(ownerId: number, responseId: string): Promise<number | null>;
}

export class DatabaseResponseKeys implements SharedResponseKeys {
  private purgedAt = 0;

  constructor(private readonly db: Db) {}

  async put(ownerId: number, responseId: string, keyId: number, ttlMs: number): Promise<void> {
    const now = Date.now();
    const expiresAt = new Date(now + ttlMs);
    await this.db.insert(responseKeys).values({ ownerId, responseId, keyId, expiresAt })
      .onConflictDoUpdate({ target: [responseKeys.ownerId, responseKeys.responseId], set: { keyId, expiresAt } });
    // Expired pairs go with the writes, at most hourly: no timer of its own.
    if (now - this.purgedAt >= PURGE_EVERY_MS) {
      this.purgedAt = now;
      await this.db.delete(responseKeys).where(lt(responseKeys.expiresAt, new Date(now)));
    }
  }

  async get(ownerId: number, responseId: string): Promise<number | null> {
    const [row] = await this.db.select({ keyId: responseKeys.keyId }).from(responseKeys)
      .where(and(eq(responseKeys.ownerId, ownerId), eq(responseKeys.responseId, responseId), gt(responseKeys.expiresAt, new Date())));
    return row?.keyId ?? null;
  }
}

export class RedisResponseKeys implements SharedResponseKeys {
  constructor(private readonly link: RedisLink) {}

  private key(ownerId: number, responseId: string): string {
    return `${this.link.prefix}response-key:${ownerId}:${responseId}`;
  }

  async put(ownerId: number, responseId: string, keyId: number, ttlMs: number): Promise<void> {
    await this.link.client.set(this.key(ownerId, responseId), String(keyId), 'PX', ttlMs);
  }

  async get(ownerId: number, responseId: string): Promise<number | null> {
    const v = await this.link.client.get(this.key(ownerId, responseId));
    const n = v === null ? NaN : Number(v);
    return Number.isSafeInteger(n) ? n : null;
  }
}

export class SharedResponseKeyBook implements ResponseKeys {
  private readonly local = new Map<string, { keyId: number; until: number }>();
  private readonly pending = new Set<Promise<void>>();

  constructor(private readonly shared: SharedResponseKeys, private readonly log: Pick<Logger, 'warn'>, private readonly ttlMs = RESPONSE_KEY_TTL_MS) {}

  remember(ownerId: number, responseId: string, keyId: number): Promise<void> {
    const id = `${ownerId}:${responseId}`;
    if (this.local.size >= LOCAL_MAX) this.local.delete(this.local.keys().next().value!);
    this.local.set(id, { keyId, until: Date.now() + this.ttlMs });
    const p = this.shared.put(ownerId, responseId, keyId, this.ttlMs)
      // Another instance continuing this response then routes it as any call; the provider answers for it.
      .catch((err) => this.log.warn('response_key_not_shared', { owner: ownerId, key: keyId, ...errorFields(err) }))
      .finally(() => this.pending.delete(p));
    this.pending.add(p);
    return p;
  }

  keyOf(ownerId: number, responseId: string): number | null | Promise<number | null> {
    const hit = this.local.get(`${ownerId}:${responseId}`);
    if (hit && hit.until > Date.now()) return hit.keyId;
    return this.shared.get(ownerId, responseId).catch((err) => {
      this.log.warn('response_key_unreadable', { owner: ownerId, ...errorFields(err) });
      return null;
    });
  }

  async settle(): Promise<void> {
    while (this.pending.size) await Promise.all([...this.pending]);
  }
}
