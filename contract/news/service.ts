import type { Actor } from '../auth/caller';
import type { NewsCreate, NewsCreateResult, NewsDeleteResult, NewsFeed } from './schemas';

/** News entries: system-wide (Root), or for one account or a subtree (its ancestors). */
export interface NewsService {
  /** `target` null: system-wide news. */
  create(actor: Actor, target: string | null, input: NewsCreate): Promise<NewsCreateResult>;
  /** `target` null: every system-wide entry; otherwise every entry under the target. */
  remove(actor: Actor, target: string | null): Promise<NewsDeleteResult>;
  feed(actor: Actor): Promise<NewsFeed>;
}
