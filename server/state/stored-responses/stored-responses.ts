import { and, eq, gt, lt, sql } from 'drizzle-orm';
import type { Db } from '../../adapters/storage/database';
import { storedResponses } from '../../adapters/storage/schema';
import type { RedisLink } from '../../adapters/redis/link';
import type { Logger } from '../../core/log';
import { errorFields } from '../../core/log';
import { RESPONSE_KEY_TTL_MS, type ResponseOwner } from '../response-keys/response-keys';

/**
 * The conversations the gateway keeps for `previous_response_id` (and for `item_reference`s to
 * their items, whose IDs name the response) when it answered a Responses call through translation: a key without the Responses API keeps nothing, so the gateway holds
 * the items a continuation needs (input and output items, as a client managing its own state
 * would send them back) under the response ID it generated, and beside them the Response
 * object as its client got it (GET /v1/responses/{id}). Shared between instances through
 * Redis with REDIS_URL, else through the database's `stored_responses` table; kept as long as
 * a provider keeps a stored response (30 days), and read back or deleted only by the account
 * that created it.
 */
export const STORED_RESPONSE_TTL_MS = RESPONSE_KEY_TTL_MS;

const PURGE_EVERY_MS = 3_600_000;

/** Who a stored conversation belongs to: the tenant and, within it, the account. */
export type ConversationOwner = ResponseOwner;

/** A kept response as read back whole: its conversation items and its Response object (null when kept before it was). */
export interface KeptResponse {
  items: unknown[];
  response: Record<string, unknown> | null;
}

export interface StoredResponses {
  /**
   * Keeps `items` under `responseId`; settles once the other instances can read them. Never
   * rejects: a conversation too big to keep or a store that fails is logged, and only its
   * continuation fails (previous_response_not_found).
   */
  keep(who: ConversationOwner, responseId: string, items: readonly unknown[], response?: Record<string, unknown>): Promise<void>;
  /** The items kept under `responseId` for this account, or null (never kept, another account's, expired). Rejects when the store cannot be read. */
  recall(who: ConversationOwner, responseId: string): Promise<unknown[] | null>;
  /** The items and the Response object kept under `responseId` for this account, or null as for `recall`. Rejects when the store cannot be read. */
  read(who: ConversationOwner, responseId: string): Promise<KeptResponse | null>;
  /** Deletes what is kept under `responseId` for this account: false when there was nothing. Rejects when the store cannot be written. */
  forget(who: ConversationOwner, responseId: string): Promise<boolean>;
  /** Waits for the writes under way (shutdown, tests). */
  settle(): Promise<void>;
}

/** A kept response as JSON text: the items, and the Response object when it was kept. */
export interface KeptText {
  items: string;
  response: string | null;
}

/** Where the conversations are shared between instances, as JSON text. */
export interface SharedConversations {
  put(who: ConversationOwner, responseId: string, kept: KeptText, ttlMs: number): Promise<void>;
  /** The items alone (a continuation), or with the Response object (`whole`). */
  get(who: ConversationOwner, responseId: string, whole?: boolean): Promise<KeptText | null>;
  delete(who: ConversationOwner, responseId: string): Promise<boolean>;
}

export class DatabaseConversations implements SharedConversations {
  private purgedAt = 0;

  constructor(private readonly db: Db) {}

  async put(who: ConversationOwner, responseId: string, { items, response }: KeptText, ttlMs: number): Promise<void> {
    const now = Date.now();
    const expiresAt = new Date(now + ttlMs);
    await this.db.insert(storedResponses).values({ ownerId: who.ownerId, accountId: who.accountId, responseId, items, response, expiresAt })
      .onConflictDoUpdate({ target: [storedResponses.ownerId, storedResponses.responseId], set: { accountId: who.accountId, items, response, expiresAt } });
    // Expired conversations go with the writes, at most hourly: no timer of its own.
    if (now - this.purgedAt >= PURGE_EVERY_MS) {
      this.purgedAt = now;
      await this.db.delete(storedResponses).where(lt(storedResponses.expiresAt, new Date(now)));
    }
  }

  async get(who: ConversationOwner, responseId: string, whole = false): Promise<KeptText | null> {
    const t = storedResponses;
    // A continuation reads the items alone.
    const [row] = await this.db.select({ items: t.items, response: whole ? t.response : sql<null>`null` }).from(t)
      .where(this.match(who, responseId));
    return row ?? null;
  }

  async delete(who: ConversationOwner, responseId: string): Promise<boolean> {
    const gone = await this.db.delete(storedResponses).where(this.match(who, responseId)).returning({ id: storedResponses.responseId });
    return gone.length > 0;
  }

  /** This account's response, not expired. */
  private match(who: ConversationOwner, responseId: string) {
    const t = storedResponses;
    return and(eq(t.ownerId, who.ownerId), eq(t.responseId, responseId), eq(t.accountId, who.accountId), gt(t.expiresAt, new Date()));
  }
}

export class RedisConversations implements SharedConversations {
  constructor(private readonly link: RedisLink) {}

  // The account is part of the key: another account's lookup misses, as an unknown ID does.
  // The items keep the key they had before the Response object was kept beside them.
  private keys(who: ConversationOwner, responseId: string): [items: string, response: string] {
    const items = `${this.link.prefix}stored-response:${who.ownerId}:${who.accountId}:${responseId}`;
    return [items, `${items}:response`];
  }

  async put(who: ConversationOwner, responseId: string, kept: KeptText, ttlMs: number): Promise<void> {
    const [items, response] = this.keys(who, responseId);
    const tx = this.link.client.multi().set(items, kept.items, 'PX', ttlMs);
    if (kept.response === null) tx.del(response);
    else tx.set(response, kept.response, 'PX', ttlMs);
    const results = await tx.exec();
    const failed = results?.find(([err]) => err);
    if (failed) throw failed[0];
  }

  async get(who: ConversationOwner, responseId: string, whole = false): Promise<KeptText | null> {
    const [items, response] = this.keys(who, responseId);
    if (!whole) {
      const text = await this.link.client.get(items);
      return text === null ? null : { items: text, response: null };
    }
    const [text, object] = await this.link.client.mget(items, response);
    return text === null ? null : { items: text, response: object };
  }

  async delete(who: ConversationOwner, responseId: string): Promise<boolean> {
    const [items, response] = this.keys(who, responseId);
    return (await this.link.client.del(items, response)) > 0;
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

  keep(who: ConversationOwner, responseId: string, items: readonly unknown[], response?: Record<string, unknown>): Promise<void> {
    const text = JSON.stringify(items);
    const object = response === undefined ? null : JSON.stringify(response);
    // Each must fit in a request body. Characters bound bytes from below; the exact count only when it may matter.
    const tooLarge = (t: string | null) => t !== null && (t.length > this.opts.maxBytes || Buffer.byteLength(t) > this.opts.maxBytes);
    if (tooLarge(text) || tooLarge(object)) {
      this.log.warn('stored_response_too_large', { owner: who.ownerId, account: who.accountId, response: responseId, bytes: Buffer.byteLength(text) + (object ? Buffer.byteLength(object) : 0), max_bytes: this.opts.maxBytes });
      return Promise.resolve();
    }
    const p = this.shared.put(who, responseId, { items: text, response: object }, this.ttlMs)
      .catch((err) => this.log.warn('stored_response_not_kept', { owner: who.ownerId, account: who.accountId, response: responseId, ...errorFields(err) }))
      .finally(() => this.pending.delete(p));
    this.pending.add(p);
    return p;
  }

  async recall(who: ConversationOwner, responseId: string): Promise<unknown[] | null> {
    const kept = await this.shared.get(who, responseId);
    return kept === null ? null : itemsOf(kept.items);
  }

  async read(who: ConversationOwner, responseId: string): Promise<KeptResponse | null> {
    const kept = await this.shared.get(who, responseId, true);
    const items = kept === null ? null : itemsOf(kept.items);
    if (items === null) return null;
    const response: unknown = kept!.response === null ? null : JSON.parse(kept!.response);
    return { items, response: typeof response === 'object' && response !== null && !Array.isArray(response) ? (response as Record<string, unknown>) : null };
  }

  forget(who: ConversationOwner, responseId: string): Promise<boolean> {
    return this.shared.delete(who, responseId);
  }

  async settle(): Promise<void> {
    while (this.pending.size) await Promise.all([...this.pending]);
  }
}

function itemsOf(text: string): unknown[] | null {
  const items: unknown = JSON.parse(text);
  return Array.isArray(items) ? items : null;
}
