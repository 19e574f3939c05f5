import { and, eq, gt, lt } from 'drizzle-orm';
import type { Db } from '../../adapters/storage/database';
import { responseKeys } from '../../adapters/storage/schema';
import type { RedisLink } from '../../adapters/redis/link';
import type { Logger } from '../../core/log';
import { errorFields } from '../../core/log';

/**
 * Which provider key created each stored Responses API response, and for which account. A
 * response lives in the provider organization of the key that created it, so a call continuing
 * it (`previous_response_id`) must reach that key, whichever instance it lands on, and only the
 * account that created it may read or delete it through the gateway: the pairs are shared
 * through Redis with REDIS_URL, through the database's `response_keys` table without, and kept
 * for RESPONSE_KEY_TTL_MS (a provider keeps a stored response 30 days). This instance's own
 * pairs are also held in memory, so its next call needs no round trip.
 */
export const RESPONSE_KEY_TTL_MS = 30 * 86_400_000;

/** Most pairs held in memory; the oldest go first (the shared store still has them). */
const LOCAL_MAX = 10_000;
const PURGE_EVERY_MS = 3_600_000;

/** Whose call created a response: the tenant and, within it, the account. */
export interface ResponseOwner {
  ownerId: number;
  accountId: number;
}

/** The key that created a response, and the account whose call it was (null for a pair noted before accounts were). */
export interface ResponseCreator {
  keyId: number;
  accountId: number | null;
}

export interface ResponseKeys {
  /** Notes that `keyId` created `responseId` for `who`; settles once the other instances can read it (or sharing failed, logged). */
  remember(who: ResponseOwner, responseId: string, keyId: number): Promise<void>;
  /** The key that created the response, or null when none is known (never noted, or expired). */
  keyOf(ownerId: number, responseId: string): number | null | Promise<number | null>;
  /** The key and account that created the response, or null when none is known. */
  creatorOf(ownerId: number, responseId: string): ResponseCreator | null | Promise<ResponseCreator | null>;
  /** Waits for the writes under way (shutdown, tests). */
  settle(): Promise<void>;
}

/** Where the pairs are shared between instances. */
export interface SharedResponseKeys {
  put(who: ResponseOwner, responseId: string, keyId: number, ttlMs: number): Promise<void>;
  get(ownerId: number, responseId: string): Promise<ResponseCreator | null>;
}

export class DatabaseResponseKeys implements SharedResponseKeys {
  private purgedAt = 0;

  constructor(private readonly db: Db) {}

  async put({ ownerId, accountId }: ResponseOwner, responseId: string, keyId: number, ttlMs: number): Promise<void> {
    const now = Date.now();
    const expiresAt = new Date(now + ttlMs);
    await this.db.insert(responseKeys).values({ ownerId, responseId, keyId, accountId, expiresAt })
      .onConflictDoUpdate({ target: [responseKeys.ownerId, responseKeys.responseId], set: { keyId, accountId, expiresAt } });
    // Expired pairs go with the writes, at most hourly: no timer of its own.
    if (now - this.purgedAt >= PURGE_EVERY_MS) {
      this.purgedAt = now;
      await this.db.delete(responseKeys).where(lt(responseKeys.expiresAt, new Date(now)));
    }
  }

  async get(ownerId: number, responseId: string): Promise<ResponseCreator | null> {
    const [row] = await this.db.select({ keyId: responseKeys.keyId, accountId: responseKeys.accountId }).from(responseKeys)
      .where(and(eq(responseKeys.ownerId, ownerId), eq(responseKeys.responseId, responseId), gt(responseKeys.expiresAt, new Date())));
    return row ?? null;
  }
}

export class RedisResponseKeys implements SharedResponseKeys {
  constructor(private readonly link: RedisLink) {}

  private key(ownerId: number, responseId: string): string {
    return `${this.link.prefix}response-key:${ownerId}:${responseId}`;
  }

  async put(who: ResponseOwner, responseId: string, keyId: number, ttlMs: number): Promise<void> {
    await this.link.client.set(this.key(who.ownerId, responseId), `${keyId}:${who.accountId}`, 'PX', ttlMs);
  }

  async get(ownerId: number, responseId: string): Promise<ResponseCreator | null> {
    const v = await this.link.client.get(this.key(ownerId, responseId));
    return v === null ? null : parseCreator(v);
  }
}

/** `keyId:accountId`, or `keyId` alone as values were written before accounts were kept. */
export function parseCreator(value: string): ResponseCreator | null {
  const [key, account] = value.split(':');
  const keyId = Number(key);
  const accountId = account === undefined ? null : Number(account);
  if (!Number.isSafeInteger(keyId) || (accountId !== null && !Number.isSafeInteger(accountId))) return null;
  return { keyId, accountId };
}

export class SharedResponseKeyBook implements ResponseKeys {
  private readonly local = new Map<string, ResponseCreator & { until: number }>();
  private readonly pending = new Set<Promise<void>>();

  constructor(private readonly shared: SharedResponseKeys, private readonly log: Pick<Logger, 'warn'>, private readonly ttlMs = RESPONSE_KEY_TTL_MS) {}

  remember(who: ResponseOwner, responseId: string, keyId: number): Promise<void> {
    const id = `${who.ownerId}:${responseId}`;
    if (this.local.size >= LOCAL_MAX) this.local.delete(this.local.keys().next().value!);
    this.local.set(id, { keyId, accountId: who.accountId, until: Date.now() + this.ttlMs });
    const p = this.shared.put(who, responseId, keyId, this.ttlMs)
      // Another instance continuing this response then routes it as any call; the provider answers for it.
      .catch((err) => this.log.warn('response_key_not_shared', { owner: who.ownerId, key: keyId, ...errorFields(err) }))
      .finally(() => this.pending.delete(p));
    this.pending.add(p);
    return p;
  }

  keyOf(ownerId: number, responseId: string): number | null | Promise<number | null> {
    const hit = this.creatorOf(ownerId, responseId);
    return hit instanceof Promise ? hit.then((c) => c?.keyId ?? null) : hit?.keyId ?? null;
  }

  creatorOf(ownerId: number, responseId: string): ResponseCreator | null | Promise<ResponseCreator | null> {
    const hit = this.local.get(`${ownerId}:${responseId}`);
    if (hit && hit.until > Date.now()) return hit;
    return this.shared.get(ownerId, responseId).catch((err) => {
      this.log.warn('response_key_unreadable', { owner: ownerId, ...errorFields(err) });
      return null;
    });
  }

  async settle(): Promise<void> {
    while (this.pending.size) await Promise.all([...this.pending]);
  }
}
