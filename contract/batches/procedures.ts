import type { Caller } from '../auth/caller';
import { accountTargetErrors, authedProcedure, route, router } from '../trpc';
import { BatchIdPath, BatchPage, BatchQuery, GatewayBatch } from './schemas';

const tags = ['dashboard'];
const actor = (ctx: { caller: Caller; ip: string }) => ({ caller: ctx.caller, ip: ctx.ip });

export const batchesRouter = router({
  list: authedProcedure
    .meta(route({
      method: 'GET', path: '/dashboard/batches', tags, access: 'account', summary: 'Provider batches of the caller\'s subtree, newest first',
      description: 'Batches created through `/v1/batches` and `/v1/messages/batches` by the account (`user`, default the caller) and every account below it: status, lines, what each holds (`reserved`) and what it was billed.',
      errors: { 400: 'Invalid filter, limit or offset', ...accountTargetErrors() },
    }))
    .input(BatchQuery.optional())
    .output(BatchPage)
    .query(({ ctx, input }) => ctx.services.batches.list(actor(ctx), input ?? {})),
  get: authedProcedure
    .meta(route({
      method: 'GET', path: '/dashboard/batches/{id}', tags, access: 'account', summary: 'One provider batch of the caller\'s subtree',
      errors: { 404: 'No such batch in the caller\'s subtree (any other gets the same answer)' },
    }))
    .input(BatchIdPath)
    .output(GatewayBatch)
    .query(({ ctx, input }) => ctx.services.batches.get(actor(ctx), input.id)),
});
