import type { Caller } from '../auth/caller';
import { accountTargetErrors, authedProcedure, route, router } from '../trpc';
import { NewsCreate, NewsCreateResult, NewsDeleteResult, NewsFeed, NewsTargetPath, NoQuery } from './schemas';

const tags = ['news'];
const actor = (ctx: { caller: Caller; ip: string }) => ({ caller: ctx.caller, ip: ctx.ip });
const targetErrors = accountTargetErrors('Caller lacks manage permission, or names its own account by ID or name');

export const newsRouter = router({
  createSystem: authedProcedure
    .meta(route({ method: 'POST', path: '/x-news', tags, access: 'root', successStatus: 201, summary: 'Post system-wide news (Root only)' }))
    .input(NewsCreate)
    .output(NewsCreateResult)
    .mutation(async ({ ctx, input }) => {
      const result = await ctx.services.news.create(actor(ctx), null, input);
      ctx.response.status = 201;
      return result;
    }),
  createTargeted: authedProcedure
    .meta(route({
      method: 'POST', path: '/x-news/{target}', tags, access: 'manage', successStatus: 201, summary: 'Post news for one account or a subtree',
      description: 'The caller must be an ancestor of the target (a DNA path may also be the caller\'s own: its whole subtree), or Root.',
      errors: targetErrors,
    }))
    .input(NewsCreate.extend(NewsTargetPath.shape))
    .output(NewsCreateResult)
    .mutation(async ({ ctx, input: { target, ...body } }) => {
      const result = await ctx.services.news.create(actor(ctx), target, body);
      ctx.response.status = 201;
      return result;
    }),
  removeSystem: authedProcedure
    .meta(route({ method: 'DELETE', path: '/x-news', tags, access: 'root', summary: 'Delete every system-wide entry (Root only)' }))
    .input(NoQuery.optional())
    .output(NewsDeleteResult)
    .mutation(({ ctx }) => ctx.services.news.remove(actor(ctx), null)),
  removeTargeted: authedProcedure
    .meta(route({
      method: 'DELETE', path: '/x-news/{target}', tags, access: 'manage', summary: 'Delete the news under a target',
      description: 'For an account: the entries targeted at it; for a DNA path: every entry for that subtree or an account in it. Only entries written by the caller or by accounts below it (Root: all).',
      errors: targetErrors,
    }))
    .input(NewsTargetPath)
    .output(NewsDeleteResult)
    .mutation(({ ctx, input }) => ctx.services.news.remove(actor(ctx), input.target)),
  feed: authedProcedure
    .meta(route({ method: 'GET', path: '/dashboard/news', tags: ['news'], access: 'account', summary: 'Unexpired news visible to the current account', errors: { 400: 'Unknown query parameter' } }))
    .input(NoQuery.optional())
    .output(NewsFeed)
    .query(({ ctx }) => ctx.services.news.feed(actor(ctx))),
});
