import { z } from 'zod';
import type { Caller } from '../auth/caller';
import { accountTargetErrors, authedProcedure, route, router, sendPage } from '../trpc';
import {
  Account, AccountAddResult, AccountCreate, AccountIdentifierPath, AccountListQuery, AccountPatch, AccountResult, AccountSelectQuery,
  NoQuery, SelfRotate, SelfRotateResult, UserStatus,
} from './schemas';
import type { AccountScope } from './service';

const tags = ['accounts'];
const actor = (ctx: { caller: Caller; ip: string }) => ({ caller: ctx.caller, ip: ctx.ip });
const scopeErrors = accountTargetErrors('Caller lacks manage permission, or may not do this to its own account');

const list = (path: '/x-users' | '/x-dna', scope: AccountScope, summary: string) =>
  authedProcedure
    .meta(route({ method: 'GET', path, tags, access: 'manage', paginated: true, summary }))
    .input(AccountListQuery)
    .output(z.array(Account))
    .query(async ({ ctx, input }) => sendPage(ctx, await ctx.services.accounts.list(actor(ctx), scope, input)));

const select = (path: '/x-users/{identifier}' | '/x-dna/{identifier}', scope: AccountScope, summary: string) =>
  authedProcedure
    .meta(route({ method: 'GET', path, tags, access: 'manage', paginated: true, summary, errors: scopeErrors }))
    .input(AccountSelectQuery)
    .output(z.array(Account))
    .query(async ({ ctx, input: { identifier, ...paging } }) => sendPage(ctx, await ctx.services.accounts.select(actor(ctx), scope, identifier, paging)));

const update = (method: 'PUT' | 'POST') =>
  authedProcedure
    .meta(route({
      method, path: '/x-users/{identifier}', tags, access: 'manage', summary: 'Update a subaccount (or the caller\'s own profile)',
      description: 'Level, Role, Factor, LevelMapper, Gear and Tier only for an Owner. A positive CreditGranted adds a card, a negative one takes credit back.',
      errors: { ...scopeErrors, 402: 'The caller (or the target, for a take-back) lacks the credit', 409: 'Name or Email already taken' },
    }))
    .input(AccountPatch.extend(AccountIdentifierPath.shape))
    .output(AccountResult)
    .mutation(({ ctx, input: { identifier, ...patch } }) => ctx.services.accounts.update(actor(ctx), identifier, patch));

export const accountsRouter = router({
  create: authedProcedure
    .meta(route({
      method: 'POST', path: '/x-users', tags, access: 'manage', successStatus: 201, summary: 'Create a subaccount (a direct child of the caller)',
      description: 'Answers the new account with its API key (`User.SecretKey`), shown only this once.',
      errors: { 402: 'A non-Owner caller lacks the credit it grants', 409: 'Name or Email already taken' },
    }))
    .input(AccountCreate)
    .output(AccountAddResult)
    .mutation(async ({ ctx, input }) => {
      const result = await ctx.services.accounts.create(actor(ctx), input);
      ctx.response.status = 201;
      return result;
    }),
  children: list('/x-users', 'children', 'Direct subaccounts of the caller'),
  descendants: list('/x-dna', 'descendants', 'All accounts below the caller'),
  selectChildren: select('/x-users/{identifier}', 'children', 'One account of the caller\'s hierarchy, or direct subaccounts by filter'),
  selectDescendants: select('/x-dna/{identifier}', 'descendants', 'One account, a subtree (DNA path) or descendants by filter'),
  update: update('PUT'),
  updateByPost: update('POST'),
  remove: authedProcedure
    .meta(route({
      method: 'DELETE', path: '/x-users/{identifier}', tags, access: 'manage', summary: 'Delete a subaccount',
      description: 'Refused (409) while it has subaccounts. Its remaining credit is refunded to a funded parent.',
      errors: { ...scopeErrors, 409: 'The account still has subaccounts' },
    }))
    .input(AccountIdentifierPath)
    .output(AccountResult)
    .mutation(({ ctx, input }) => ctx.services.accounts.remove(actor(ctx), input.identifier)),
  rotateSelf: authedProcedure
    .meta(route({
      method: 'POST', path: '/x-self', tags, access: 'account', summary: 'Replace the caller\'s own API key',
      description: 'The old key stops working at once. Allowed to every enabled account, so a leaked key can always be revoked.',
      errors: { 409: 'The supplied key is already in use' },
    }))
    .input(SelfRotate)
    .output(SelfRotateResult)
    .mutation(({ ctx, input }) => ctx.services.accounts.rotateSelf(actor(ctx), input)),
  status: authedProcedure
    .meta(route({ method: 'GET', path: '/dashboard/status', tags: ['dashboard'], access: 'account', summary: 'The current account\'s status and whether it may manage subaccounts', errors: { 400: 'Unknown query parameter' } }))
    .input(NoQuery.optional())
    .output(UserStatus)
    .query(({ ctx }) => ctx.services.accounts.status(actor(ctx))),
});
