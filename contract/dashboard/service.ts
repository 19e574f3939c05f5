import type { Actor } from '../auth/caller';
import type { LogPage, LogQuery, ModelList, RequestPage, RequestQuery, UserInfo, UserLive } from './schemas';
import type { LatencyQuery, LatencyReport } from './latency-schemas';

/** What the current account sees about itself, and what an Owner sees about one of its accounts. */
export interface DashboardService {
  info(actor: Actor): Promise<UserInfo>;
  /** user_info plus today's and this month's usage; polled, so kept to a few indexed reads. */
  live(actor: Actor): Promise<UserLive>;
  logs(actor: Actor, query: LogQuery): Promise<LogPage>;
  /** A page of one account's recent requests (the caller's, or one in its tree), newest first. */
  requests(actor: Actor, query: RequestQuery): Promise<RequestPage>;
  /**
   * Percentiles of duration and first byte per model, per key kind and per day, from the
   * latency rollup (never raw records). `subtree` is the caller's and its descendants' calls;
   * whether the caller may ask for it is checked before (manage permission).
   */
  latency(actor: Actor, query: LatencyQuery): Promise<LatencyReport>;
  /** The models the caller may use. */
  models(actor: Actor): Promise<ModelList>;
  /** `/x-info`: an account of the Owner's tree, by ID, name, email or DNA path. */
  userInfo(actor: Actor, user: string): Promise<UserLive>;
}
