import type { Caller } from '../auth/caller';
import { accountTargetErrors, authedProcedure, route, router } from '../trpc';
import { LogPage, LogQuery, ModelList, NoQuery, RequestPage, RequestQuery, UserInfo, UserInfoQuery, UserLive } from './schemas';
import { LatencyQuery, LatencyReport } from './latency-schemas';
import { LATENCY_BUCKETS_TEXT } from './latency-buckets';
import { MAX_BILL_DAYS } from '../billing/schemas';

const tags = ['dashboard'];
const actor = (ctx: { caller: Caller; ip: string }) => ({ caller: ctx.caller, ip: ctx.ip });
const models = (path: '/dashboard/models' | '/v1/models' | '/models', summary: string) =>
  authedProcedure
    .meta(route({ method: 'GET', path, tags, access: 'account', summary, errors: { 400: 'Unknown query parameter' } }))
    .input(NoQuery.optional())
    .output(ModelList)
    .query(({ ctx }) => ctx.services.dashboard.models(actor(ctx)));

export const dashboardRouter = router({
  info: authedProcedure
    .meta(route({ method: 'GET', path: '/dashboard/info', tags, access: 'account', summary: 'The current account: profile, balance and credit cards, limits, ACL and mappers', errors: { 400: 'Unknown query parameter' } }))
    .input(NoQuery.optional())
    .output(UserInfo)
    .query(({ ctx }) => ctx.services.dashboard.info(actor(ctx))),
  live: authedProcedure
    .meta(route({ method: 'GET', path: '/dashboard/live', tags, access: 'account', summary: 'user_info plus today\'s and this month\'s usage (UTC); meant for polling', errors: { 400: 'Unknown query parameter' } }))
    .input(NoQuery.optional())
    .output(UserLive)
    .query(({ ctx }) => ctx.services.dashboard.live(actor(ctx))),
  logs: authedProcedure
    .meta(route({
      method: 'GET', path: '/dashboard/logs', tags, access: 'account', summary: 'Operation log visible to the current account',
      description: 'Newest first. Entries made by the caller or by an account below it, and entries that target the caller or an account below it.',
      errors: { 400: 'Invalid page, size or filter' },
    }))
    .input(LogQuery.optional())
    .output(LogPage)
    .query(({ ctx, input }) => ctx.services.dashboard.logs(actor(ctx), input ?? {})),
  requests: authedProcedure
    .meta(route({
      method: 'GET', path: '/dashboard/requests', tags, access: 'account', summary: 'Per-request usage: a page of an account\'s recent requests, newest first',
      description: 'One entry per proxied request that produced usage, as recorded (tokens, cost, model, status, request ID). The caller\'s own by default; `user` names an account of the caller\'s tree. Raw records are kept for USAGE_RETENTION_DAYS; bills cover any period.',
      errors: { 400: 'Invalid filter, limit or cursor', ...accountTargetErrors() },
    }))
    .input(RequestQuery.optional())
    .output(RequestPage)
    .query(({ ctx, input }) => ctx.services.dashboard.requests(actor(ctx), input ?? {})),
  latency: authedProcedure
    .meta(route({
      method: 'GET', path: '/dashboard/latency', tags, access: 'account', summary: 'Percentiles of duration and time to first byte per model, per provider key kind and per day',
      description: `Read from daily latency rollups, never from raw records. Period as /dashboard/bill: \`date\`, \`start\`[..\`end\`] or \`days\`; none means today (UTC days, at most ${MAX_BILL_DAYS}). \`scope=subtree\` covers the caller and every account below it and needs manage permission. ${LATENCY_BUCKETS_TEXT}`,
      errors: { 400: 'Invalid date, range, scope or parameter', 403: 'scope=subtree: caller lacks manage permission' },
    }))
    .input(LatencyQuery.optional())
    .output(LatencyReport)
    .query(async ({ ctx, input }) => {
      const query = input ?? {};
      // A subtree's latencies are a manager's view, as its bill (/x-bill) is: the same check.
      if (query.scope === 'subtree') await ctx.services.auth.authorize(ctx, 'manage');
      return ctx.services.dashboard.latency(actor(ctx), query);
    }),
  models: models('/dashboard/models', 'Models the current account may use'),
  modelsV1: models('/v1/models', 'Models the current account may use (alias of /dashboard/models)'),
  modelsRoot: models('/models', 'Models the current account may use (alias of /dashboard/models)'),
  userInfo: authedProcedure
    .meta(route({
      method: 'GET', path: '/x-info', tags: ['accounts'], access: 'owner', summary: 'An account of the Owner\'s tree: user_info with daily and monthly usage',
      errors: { 400: 'Missing or invalid `user`', 404: 'No such account in the Owner\'s tenant (another tenant\'s gets the same answer)' },
    }))
    .input(UserInfoQuery)
    .output(UserLive)
    .query(({ ctx, input }) => ctx.services.dashboard.userInfo(actor(ctx), input.user)),
});
