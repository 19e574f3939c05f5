import { and, desc, eq, gt, inArray, or, type SQL } from 'drizzle-orm';
import type { NewsService } from '../../../contract/news/service';
import { NEWS_DEFAULT_DAYS, type NewsCreate, type NewsCreateResult, type NewsDeleteResult, type NewsEntry, type NewsFeed } from '../../../contract/news/schemas';
import type { Actor, Caller } from '../../../contract/services';
import { forbidden } from '../../../contract/errors';
import type { Db } from '../../adapters/storage/database';
import { accounts, news } from '../../adapters/storage/schema';
import type { AccountRow } from '../../state/accounts/account-cache';
import { isDescendantDna } from '../../state/accounts/caller';
import { recordOperation } from '../../state/oplog/oplog';
import { inSubtree } from '../billing/subtree';
import { findAccount, parseSingleIdentifier } from '../accounts/identifiers';

const DAY_MS = 86_400_000;
/** How many entries of each kind the feed shows, newest first. */
export const FEED_LIMIT = 20;

type Row = typeof news.$inferSelect;

const view = (r: Row): NewsEntry => ({
  id: r.id,
  scope: r.scope,
  title: r.title,
  content: r.content,
  author_id: r.authorId,
  target_id: r.targetId,
  target_dna: r.targetDna,
  created_at: r.createdAt.toISOString(),
  expires_at: r.expiresAt.toISOString(),
});

/** The DNA paths a subtree-targeted entry must carry to reach this account: its own and its ancestors'. */
export function pathsAbove(dna: string): string[] {
  const ids = dna.split('.').filter(Boolean);
  return ids.map((_, i) => `.${ids.slice(0, i + 1).join('.')}.`);
}

interface Target {
  account: AccountRow;
  /** `.1.42.` addresses the subtree; an ID or a name addresses the account itself. */
  subtree: boolean;
}

export class News implements NewsService {
  constructor(private readonly db: Db) {}

  /**
   * Ancestor permission: an account's news comes from above it; a subtree's from its root or
   * above (so an account may address its own subtree). Root may address anyone.
   */
  private async target(caller: Caller, raw: string): Promise<Target> {
    const ident = parseSingleIdentifier(raw, 'target');
    const account = await findAccount(this.db, caller, ident, { param: 'target' });
    const subtree = ident.kind === 'dna';
    const allowed = caller.isRoot || isDescendantDna(account.dna, caller.dna) || (subtree && account.id === caller.id);
    if (!allowed) throw forbidden(`You are not an ancestor of ${subtree ? account.dna : `account #${account.id}`}`);
    return { account, subtree };
  }

  async create(actor: Actor, raw: string | null, input: NewsCreate): Promise<NewsCreateResult> {
    const target = raw === null ? null : await this.target(actor.caller, raw);
    const days = input.days ?? (target ? NEWS_DEFAULT_DAYS.targeted : NEWS_DEFAULT_DAYS.system);
    const now = new Date();
    const row = await this.db.transaction(async (tx) => {
      const [row] = await tx.insert(news).values({
        scope: !target ? 'system' : target.subtree ? 'dna' : 'user',
        authorId: actor.caller.id,
        ownerId: target ? target.account.ownerId : null,
        targetId: target && !target.subtree ? target.account.id : null,
        targetDna: target?.subtree ? target.account.dna : null,
        title: input.title,
        content: input.content,
        createdAt: now,
        expiresAt: new Date(now.getTime() + days * DAY_MS),
      }).returning();
      await recordOperation(tx, actor, {
        action: 'add_news',
        targetId: target?.account.id ?? null,
        details: { news: row.id, scope: row.scope, title: row.title, days, ...(row.targetDna ? { dna: row.targetDna } : {}) },
      });
      return row;
    });
    return { success: true, news: view(row) };
  }

  async remove(actor: Actor, raw: string | null): Promise<NewsDeleteResult> {
    const { caller } = actor;
    const target = raw === null ? null : await this.target(caller, raw);
    let where: SQL;
    if (!target) where = eq(news.scope, 'system');
    else if (!target.subtree) where = and(eq(news.scope, 'user'), eq(news.targetId, target.account.id))!;
    else {
      where = or(
        and(eq(news.scope, 'dna'), inSubtree(news.targetDna, target.account.dna)),
        and(eq(news.scope, 'user'), inArray(news.targetId, this.db.select({ id: accounts.id }).from(accounts).where(inSubtree(accounts.dna, target.account.dna)))),
      )!;
    }
    // What an ancestor above the caller posted is not the caller's to take down.
    if (!caller.isRoot) {
      where = and(where, inArray(news.authorId, this.db.select({ id: accounts.id }).from(accounts).where(inSubtree(accounts.dna, caller.dna))))!;
    }
    const deleted = await this.db.transaction(async (tx) => {
      const gone = await tx.delete(news).where(where).returning({ id: news.id });
      await recordOperation(tx, actor, {
        action: 'delete_news',
        targetId: target?.account.id ?? null,
        details: { scope: !target ? 'system' : target.subtree ? target.account.dna : `#${target.account.id}`, deleted: gone.length },
      });
      return gone.length;
    });
    return { success: true, deleted };
  }

  async feed({ caller }: Actor): Promise<NewsFeed> {
    const now = new Date();
    const live = gt(news.expiresAt, now);
    const read = (where: SQL) => this.db.select().from(news).where(and(where, live)).orderBy(desc(news.createdAt), desc(news.id)).limit(FEED_LIMIT);
    const [sys, user, dna] = await Promise.all([
      read(eq(news.scope, 'system')),
      read(and(eq(news.scope, 'user'), eq(news.targetId, caller.id))!),
      read(and(eq(news.scope, 'dna'), inArray(news.targetDna, pathsAbove(caller.dna)))!),
    ]);
    return { sys_news: sys.map(view), user_news: user.map(view), dna_news: dna.map(view) };
  }
}
