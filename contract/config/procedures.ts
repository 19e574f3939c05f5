import type { Caller } from '../auth/caller';
import { authedProcedure, route, router } from '../trpc';
import { ConfigDelete, ConfigDeleteResult, ConfigUpdate, ConfigUpdateResult, ConfigView, ConfUpdate, ConfUpdateResult, ConfView, TestMailRequest, TestMailResult } from './schemas';

const tags = ['configuration'];
const actor = (ctx: { caller: Caller; ip: string }) => ({ caller: ctx.caller, ip: ctx.ip });
const putConfig = (method: 'PUT' | 'POST') =>
  authedProcedure
    .meta(route({ method, path: '/x-config', tags, access: 'owner', summary: 'Set configuration keys (string values only)' }))
    .input(ConfigUpdate)
    .output(ConfigUpdateResult)
    .mutation(({ ctx, input }) => ctx.services.config.put(actor(ctx), input));

export const configRouter = router({
  view: authedProcedure
    .meta(route({ method: 'GET', path: '/x-conf', tags, access: 'owner', summary: 'Routing view of the Owner configuration, with sleeping and disabled keys' }))
    .input(ConfUpdate.pick({}).optional())
    .output(ConfView)
    .query(({ ctx }) => ctx.services.config.view(actor(ctx))),
  batch: authedProcedure
    .meta(route({ method: 'POST', path: '/x-conf', tags, access: 'owner', summary: 'Batch update; ModelMapper and ModelLimits cascade to descendants' }))
    .input(ConfUpdate)
    .output(ConfUpdateResult)
    .mutation(({ ctx, input }) => ctx.services.config.batch(actor(ctx), input)),
  get: authedProcedure
    .meta(route({ method: 'GET', path: '/x-config', tags, access: 'owner', summary: 'Read the Owner configuration keys' }))
    .input(ConfUpdate.pick({}).optional())
    .output(ConfigView)
    .query(({ ctx }) => ctx.services.config.get(actor(ctx))),
  put: putConfig('PUT'),
  post: putConfig('POST'),
  remove: authedProcedure
    .meta(route({ method: 'DELETE', path: '/x-config', tags, access: 'owner', summary: 'Delete configuration keys (deleting PRICING restores the default prices)' }))
    .input(ConfigDelete)
    .output(ConfigDeleteResult)
    .mutation(({ ctx, input }) => ctx.services.config.remove(actor(ctx), input.keys)),
  testMail: authedProcedure
    .meta(route({
      method: 'POST', path: '/x-config/test-mail', tags, access: 'owner', summary: 'Send a test mail with the stored mail settings',
      description: 'Sends one message through EMAIL_SMTP, EMAIL_PORT, EMAIL_AUTH and EMAIL_PASS, as alerts are sent. The answer never holds the server\'s address, the login or the password.',
      errors: { 400: 'EMAIL_SMTP is not set (`mail_not_configured`), or the mail server refused the login (`mail_auth_refused`), the sender or recipients (`mail_rejected`), or could not be reached (`mail_unreachable`)' },
    }))
    .input(TestMailRequest)
    .output(TestMailResult)
    .mutation(({ ctx, input }) => ctx.services.config.testMail(actor(ctx), input)),
});
