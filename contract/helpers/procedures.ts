import { z } from 'zod';
import { authedProcedure, publicProcedure, route, router } from '../trpc';
import { DecryptedText, EncryptedText, GeneratedKey, TextPath } from './schemas';

const tags = ['helpers'];
const actor = (ctx: { caller: import('../auth/caller').Caller; ip: string }) => ({ caller: ctx.caller, ip: ctx.ip });

export const helpersRouter = router({
  health: publicProcedure
    .meta(route({ method: 'GET', path: '/healthz', tags, access: 'public', summary: 'Liveness: 200 once the server can serve' }))
    .input(z.object({}).optional())
    .output(z.object({ status: z.literal('ok') }))
    .query(() => ({ status: 'ok' as const })),
  generateKey: authedProcedure
    .meta(route({ method: 'GET', path: '/x-gkey', tags, access: 'owner', summary: 'Generate a key in the service key format' }))
    .input(z.object({}).optional())
    .output(GeneratedKey)
    .query(({ ctx }) => ctx.services.helpers.generateKey(actor(ctx))),
  encrypt: authedProcedure
    .meta(route({ method: 'GET', path: '/x-ekey/{text}', tags, access: 'owner', summary: 'Encrypt a text with the Owner-scoped master key' }))
    .input(TextPath)
    .output(EncryptedText)
    .query(({ ctx, input }) => ctx.services.helpers.encrypt(actor(ctx), input.text)),
  decrypt: authedProcedure
    .meta(route({ method: 'GET', path: '/x-dkey/{text}', tags, access: 'owner', summary: 'Decrypt a text made by /x-ekey', errors: { 400: 'Not a text this Owner encrypted' } }))
    .input(TextPath)
    .output(DecryptedText)
    .query(({ ctx, input }) => ctx.services.helpers.decrypt(actor(ctx), input.text)),
});
