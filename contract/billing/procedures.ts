import type { Caller } from '../auth/caller';
import { accountTargetErrors, authedProcedure, route, router } from '../trpc';
import { BillInfo, BillQuery, DescendantBillInfo, DescendantBillQuery, MAX_BILL_DAYS } from './schemas';

const tags = ['billing'];
const actor = (ctx: { caller: Caller; ip: string }) => ({ caller: ctx.caller, ip: ctx.ip });
const periodRules = `Period: \`date\` (one day), \`start\`[..\`end\`] (both included), or \`days\` (the last n days, today included); none means today. Days are UTC; a period is at most ${MAX_BILL_DAYS} days.`;

export const billingRouter = router({
  bill: authedProcedure
    .meta(route({ method: 'GET', path: '/dashboard/bill', tags, access: 'account', summary: 'Bill of the current account', description: periodRules, errors: { 400: 'Invalid date, range or parameter' } }))
    .input(BillQuery.optional())
    .output(BillInfo)
    .query(({ ctx, input }) => ctx.services.billing.bill(actor(ctx), input ?? {})),
  descendants: authedProcedure
    .meta(route({
      method: 'GET', path: '/x-bill', tags, access: 'manage', summary: 'Bill of the caller\'s descendants, with a per-account breakdown',
      description: `${periodRules} The caller's own usage is not counted.`,
      errors: { 400: 'Invalid date, range, user or parameter', ...accountTargetErrors('Caller lacks manage permission') },
    }))
    .input(DescendantBillQuery.optional())
    .output(DescendantBillInfo)
    .query(({ ctx, input }) => ctx.services.billing.descendants(actor(ctx), input ?? {})),
});
