import { and, asc, count, desc, eq, ne, sql, type SQL } from 'drizzle-orm';
import type { Account, AccountListQuery, AccountOrder } from '../../../contract/accounts/schemas';
import type { AccountPaging, AccountScope } from '../../../contract/accounts/service';
import type { Actor, Caller } from '../../../contract/services';
import type { Page } from '../../../contract/trpc';
import { badRequest } from '../../../contract/errors';
import { accounts } from '../../adapters/storage/schema';
import { pageOf } from '../../adapters/storage/paging';
import { DNA_PATH, inSubtree } from '../billing/subtree';
import type { AccountDeps } from './deps';
import { findAccount, parseIdentifier } from './identifiers';
import { accountViews } from './view';

const ORDER_COLUMNS = { id: accounts.id, name: accounts.name, email: accounts.email, level: accounts.level, dna: accounts.dna, created: accounts.createdAt };

function orderBy(order: AccountOrder | undefined): SQL[] {
  const o = order ?? 'id';
  const descending = o.startsWith('-');
  const column = ORDER_COLUMNS[o.replace(/^-/, '') as keyof typeof ORDER_COLUMNS];
  const primary = descending ? desc(column) : asc(column);
  return column === accounts.id ? [primary] : [primary, asc(accounts.id)];
}

/** `/x-users`: the caller's direct children; `/x-dna`: everything below it (one index range). */
function scopeCondition(scope: AccountScope, caller: Caller): SQL {
  return scope === 'children'
    ? eq(accounts.parentId, caller.id)
    : and(inSubtree(accounts.dna, caller.dna), ne(accounts.id, caller.id))!;
}

/** `%` and `_` in a search term are literal characters. */
const contains = (term: string) => `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

async function page(d: AccountDeps, where: SQL, paging: AccountPaging): Promise<Page<Account>> {
  const { page, size, offset } = pageOf(paging);
  const [{ n }] = await d.db.select({ n: count() }).from(accounts).where(where);
  const rows = n === 0 ? [] : await d.db.select().from(accounts).where(where).orderBy(...orderBy(paging.order)).limit(size).offset(offset);
  return { items: await accountViews(d.db, rows, d.pendingCredit), total: n, page, size };
}

export function listAccounts(d: AccountDeps, { caller }: Actor, scope: AccountScope, q: AccountListQuery): Promise<Page<Account>> {
  const where: SQL[] = [scopeCondition(scope, caller)];
  if (q.id !== undefined) where.push(eq(accounts.id, q.id));
  if (q.name !== undefined) where.push(sql`${accounts.name} ilike ${contains(q.name)}`);
  if (q.email !== undefined) where.push(sql`${accounts.email} ilike ${contains(q.email)}`);
  if (q.level !== undefined) where.push(eq(accounts.level, q.level));
  if (q.dna !== undefined) {
    if (!DNA_PATH.test(q.dna)) throw badRequest(`dna: "${q.dna}" is not a DNA path (like .1.42.)`);
    where.push(inSubtree(accounts.dna, q.dna));
  }
  return page(d, and(...where)!, q);
}

/**
 * The path forms: a filter selects among the scope (children or descendants); an ID, name or
 * email selects that one account anywhere in the caller's hierarchy (the caller itself
 * included; any other is answered as `findAccount` says); a DNA path selects that account, and
 * on `/x-dna` its whole subtree.
 */
export async function selectAccounts(d: AccountDeps, { caller }: Actor, scope: AccountScope, identifier: string, paging: AccountPaging): Promise<Page<Account>> {
  const ident = parseIdentifier(identifier);
  if (ident.kind === 'filter') return page(d, and(scopeCondition(scope, caller), ident.where)!, paging);
  const row = await findAccount(d.db, caller, ident);
  if (ident.kind === 'dna' && scope === 'descendants') {
    return page(d, and(inSubtree(accounts.dna, row.dna), ne(accounts.id, caller.id))!, paging);
  }
  return page(d, eq(accounts.id, row.id), paging);
}
