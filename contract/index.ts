import { router } from './trpc';
import { keysRouter } from './keys/procedures';
import { configRouter } from './config/procedures';
import { helpersRouter } from './helpers/procedures';
import { dashboardRouter } from './dashboard/procedures';
import { billingRouter } from './billing/procedures';
import { accountsRouter } from './accounts/procedures';
import { newsRouter } from './news/procedures';
import { batchesRouter } from './batches/procedures';

/** Every endpoint of the administration API, defined once. */
export const appRouter = router({
  keys: keysRouter,
  config: configRouter,
  helpers: helpersRouter,
  dashboard: dashboardRouter,
  billing: billingRouter,
  accounts: accountsRouter,
  news: newsRouter,
  batches: batchesRouter,
});

export type AppRouter = typeof appRouter;
export type { RequestContext, Access, Meta, Page } from './trpc';
export type { Services } from './services';
export { ApiError, errorType, defaultCode } from './errors';
