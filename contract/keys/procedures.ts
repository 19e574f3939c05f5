import { z } from 'zod';
import { authedProcedure, route, router, sendPage } from '../trpc';
import { ProviderKey, ProviderKeyCreate, ProviderKeyIdPath, ProviderKeyListQuery, ProviderKeyPatch, ProviderKeyResult, ProviderKeySelectorQuery } from './schemas';

const tags = ['provider keys'];
const actor = (ctx: { caller: import('../auth/caller').Caller; ip: string }) => ({ caller: ctx.caller, ip: ctx.ip });
const update = (method: 'PUT' | 'POST') =>
  authedProcedure
    .meta(route({ method, path: '/x-keys/{id}', tags, access: 'owner', summary: 'Update a provider key', errors: { 404: 'Key not found' } }))
    .input(ProviderKeyPatch.extend(ProviderKeyIdPath.shape))
    .output(ProviderKeyResult)
    .mutation(({ ctx, input: { id, ...patch } }) => ctx.services.keys.update(actor(ctx), Number(id), patch));

export const keysRouter = router({
  list: authedProcedure
    .meta(route({ method: 'GET', path: '/x-keys', tags, access: 'owner', paginated: true, summary: 'List provider keys' }))
    .input(ProviderKeyListQuery)
    .output(z.array(ProviderKey))
    .query(async ({ ctx, input }) => sendPage(ctx, await ctx.services.keys.list(actor(ctx), input))),
  select: authedProcedure
    .meta(route({ method: 'GET', path: '/x-keys/{selector}', tags, access: 'owner', paginated: true, summary: 'Provider keys by ID, by Level (L{n}) or by provider host', errors: { 404: 'No key with that ID' } }))
    .input(ProviderKeySelectorQuery)
    .output(z.array(ProviderKey))
    .query(async ({ ctx, input: { selector, ...paging } }) => sendPage(ctx, await ctx.services.keys.select(actor(ctx), selector, paging))),
  create: authedProcedure
    .meta(route({ method: 'POST', path: '/x-keys', tags, access: 'owner', successStatus: 201, summary: 'Add a provider key' }))
    .input(ProviderKeyCreate)
    .output(ProviderKeyResult)
    .mutation(async ({ ctx, input }) => {
      ctx.response.status = 201;
      return ctx.services.keys.create(actor(ctx), input);
    }),
  update: update('PUT'),
  updateByPost: update('POST'),
  remove: authedProcedure
    .meta(route({ method: 'DELETE', path: '/x-keys/{id}', tags, access: 'owner', summary: 'Delete a provider key', errors: { 404: 'Key not found' } }))
    .input(ProviderKeyIdPath)
    .output(ProviderKeyResult)
    .mutation(({ ctx, input }) => ctx.services.keys.remove(actor(ctx), Number(input.id))),
});
