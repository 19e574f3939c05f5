import type { Actor } from '../auth/caller';
import type { LogPage, LogQuery, ModelList, RequestPage, RequestQuery, UserInfo, UserLive } from './schemas';

/** What the current account sees about itself, and what an Owner sees about one of its accounts. */
export interface DashboardService {
  info(actor: Actor): Promise<UserInfo>;
  /** user_info plus today's and this month's usage; polled, so kept to a few indexed reads. */
  live(actor: Actor): Promise<UserLive>;
  logs(actor: Actor, query: LogQuery): Promise<LogPage>;
  /** A page of one account's recent requests (the caller's, or one in its tree), newest first. */
  requests(actor: Actor, query: RequestQuery): Promise<RequestPage>;
  /** The models the caller may use. */
  models(actor: Actor): Promise<ModelList>;
  /** `/x-info`: an account of the Owner's tree, by ID, name, email or DNA path. */
  userInfo(actor: Actor, user: string): Promise<UserLive>;
}
