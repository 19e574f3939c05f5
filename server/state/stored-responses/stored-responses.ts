import { and, eq, gt, lt } from 'drizzle-orm';
import type { Db } from '../../adapters/storage/database';
import { storedResponses } from '../../adapters/storage/schema';
import type { RedisLink } from '../../adapters/redis/link';
import type { Logger } from '../../core/log';
import { errorFields } from '../../core/log';
import { RESPONSE_KEY_TTL_MS } from '../response-keys/response-keys';

/**
 * The conversations the gateway keeps for `previous_response_id` when it answered a Responses
 * call through translation: a key without the Responses API keeps nothing, so the gateway holds
 * the items a continuation needs (input and output items, as a client managing its own state
 * would send them back) under the response ID it generated. Shared between instances through
 * Redis with REDIS_URL, else through the database's `stored_responses` table; kept as long as
 * a provider keeps a stored response (30 days), and read back only by the account that
 * created it.
 */
export const STORED_RESPONSE_TTL_MS = RESPONSE_KEY_TTL_MS;

const PURGE_EVERY_MS = 3_600_000;

/** Who a stored conversation belongs to: the tenant and, within it, the account. */
export interface ConversationOwner {
  ownerId: number;
  accountId: number;
}

export interface StoredResponses {
  /**
   * Keeps `items` under `responseId`; settles once the other instances can read them. Never
   * rejects: a conversation too big to keep or a store that fails is logged, and only its
   * continuation fails (previous_response_not_found).
   */
  keep(who: ConversationOwner, responseId: string, items: readonly unknown[]): Promise<void>;
  /** The items kept under `responseId` for this account, or null (never kept, another account's, expired). Rejects when the store cannot be read. */
  recall(who: ConversationOwner, responseId: string): Promise<unknown[] | null>;
  /** Waits for the writes under way (shutdown, tests). */
  settle(): Promise<void>;
}

/** Where the conversations are shared between instances, as JSON text. */
export interface SharedConversations {
  put(who: ConversationOwner, responseId: string, items: string, ttlMs: number): Promise<void>;
  get(who: ConversationOwner, responseId: string): Promise<string | null>;
}

export class DatabaseConversations implements SharedConversations {
  private purgedAt = 0;

  constructor(private readonly db: Db) {}

  async put(who: ConversationOwner, responseId: string, items: string, ttlMs: number): Promise<void> {
    const now = Date.now();
    const expiresAt = new Date(now + ttlMs);
    await this.db.insert(storedResponses).values({ ...who, responseId, items, expiresAt })
      .onConflictDoUpdate({ target: [storedResponses.ownerId, storedResponses.responseId], set: { accountId: who.accountId, items, expiresAt } });
    // Expired conversations go with the writes, at most hourly: no timer of its own.
    if (now - this.purgedAt >= PURGE_EVERY_MS) {
      this.purgedAt = now;
      await this.db.delete(storedResponses).where(lt(storedResponses.expiresAt, new Date(now)));
    }
  }

  async get(who: ConversationOwner, responseId: string): Promise<string | null> {
    const t = storedResponses;
    const [row] = await this.db.select({ items: t.items }).from(t)
      .where(and(eq(t.ownerId, who.ownerId), eq(t.responseId, responseId), eq(t.accountId, who.accountId), gt(t.expiresAt, new Date())));
    return row?.items ?? null;
  }
}

export class RedisConversations implements SharedConversations {
  constructor(private readonly link: RedisLink) {}

  // The account is part of the key: another account's lookup misses, as an unknown ID does.
  private key(who: ConversationOwner, responseId: string): string {
    return `${this.link.prefix}stored-response:${who.ownerId}:${who.accountId}:${responseId}`;
  }

  async put(who: ConversationOwner, responseId: string, items: string, ttlMs: number): Promise<void> {
    await this.link.client.set(this.key(who, responseId), items, 'PX', ttlMs);
  }

  get(who: ConversationOwner, responseId: string): Promise<string | null> {
    return this.link.client.get(this.key(who, responseId));
  }
}

export interface StoredResponseOptions {
  /** The most bytes of JSON one conversation may take (the proxy's MAX_BODY_BYTES): a bigger one is not kept. */
  maxBytes: number;
  ttlMs?: number;
}

export class StoredResponseBook implements StoredResponses {
  private readonly pending = new Set<Promise<void>>();
  private readonly ttlMs: number;

  constructor(private readonly shared: SharedConversations, private readonly log: Pick<Logger, 'warn'>, private readonly opts: StoredResponseOptions) {
    this.ttlMs = opts.ttlMs ?? STORED_RESPONSE_TTL_MS;
  }

  keep(who: ConversationOwner, responseId: string, items: readonly unknown[]): Promise<void> {
    const text = JSON.stringify(items);
    // Characters bound bytes from below; the exact count only when it may matter.
    if (text.length > this.opts.maxBytes || Buffer.byteLength(text) > this.opts.maxBytes) {
      this.log.warn('stored_response_too_large', { owner: who.ownerId, account: who.accountId, response: responseId, bytes: Buffer.byteLength(text), max_bytes: this.opts.maxBytes });
      return Promise.resolve();
    }
    const p = this.shared.put(who, responseId, text, this.ttlMs)
      .catch((err) => this.log.warn('stored_response_not_kept', { owner: who.ownerId, account: who.accountId, response: responseId, ...errorFields(err) }))
      .finally(() => this.pending.delete(p));
    this.pending.add(p);
    return p;
  }

  async recall(who: ConversationOwner, responseId: string): Promise<unknown[] | null> {
    const text = await this.shared.get(who, responseId);
    if (text === null) return null;
    const items: unknown = JSON.parse(text);
    return Array.isArray(items) ? items : null;
  }

  async settle(): Promise<void> {
    while (this.pending.size) await Promise.all([...this.pending]);
  }
}
