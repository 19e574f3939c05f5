import { and, between, eq, inArray, sql, type AnyColumn, type SQL } from 'drizzle-orm';
import type { Actor } from '../../../contract/services';
import type { BillingService } from '../../../contract/billing/service';
import type { BillInfo, BillQuery, DescendantBillInfo, DescendantBillQuery } from '../../../contract/billing/schemas';
import { badRequest } from '../../../contract/errors';
import type { Db } from '../../adapters/storage/database';
import { accounts, usageDaily } from '../../adapters/storage/schema';
import { buildBill, buildUsageUsers, type AccountIdentity, type UsageSums } from './bill';
import { resolvePeriod, type Period } from './period';
import { resolveBillUser, scopeCondition, type BillScope } from './user-filter';

const total = (column: AnyColumn) => sql<number>`coalesce(sum(${column}), 0)`.mapWith(Number);
const sums = {
  requests: total(usageDaily.requests),
  prompt: total(usageDaily.prompt),
  completion: total(usageDaily.completion),
  reasoning: total(usageDaily.reasoning),
  cached: total(usageDaily.cached),
  credit: sql<number>`coalesce(sum(${usageDaily.creditUsed}), 0)`.mapWith(Number),
};

/**
 * Bills read the daily aggregates only (usage_daily), never the raw records: the caller's own
 * bill through the (account, day, model) key, a subtree's through the DNA index.
 */
export class Billing implements BillingService {
  constructor(private readonly db: Db) {}

  async bill({ caller }: Actor, query: BillQuery): Promise<BillInfo> {
    const period = resolvePeriod(query);
    const rows = await this.db.select({
      day: usageDaily.day, model: usageDaily.model,
      requests: usageDaily.requests, prompt: usageDaily.prompt, completion: usageDaily.completion,
      reasoning: usageDaily.reasoning, cached: usageDaily.cached, credit: usageDaily.creditUsed,
    }).from(usageDaily)
      .where(and(eq(usageDaily.accountId, caller.id), between(usageDaily.day, period.start, period.end)));
    return buildBill(period, rows.map((r) => ({ ...r, credit: Number(r.credit) })));
  }

  async descendants({ caller }: Actor, query: DescendantBillQuery): Promise<DescendantBillInfo> {
    const { user, u, ...dates } = query;
    if (user !== undefined && u !== undefined) throw badRequest('user and u: send only one of user, u');
    const period = resolvePeriod(dates);
    const who = user ?? u;
    const scope: BillScope = who === undefined ? { kind: 'all' } : await resolveBillUser(this.db, caller, who);
    const { byDay, byAccount } = await this.subtreeSums(scopeCondition(caller, scope), period);
    const ids = [...new Set(byAccount.map((r) => r.accountId))];
    const identities = new Map<number, AccountIdentity>();
    if (ids.length) {
      const rows = await this.db.select({ id: accounts.id, name: accounts.name, alias: accounts.alias, email: accounts.email, dna: accounts.dna })
        .from(accounts).where(inArray(accounts.id, ids));
      for (const r of rows) identities.set(r.id, r);
    }
    return { ...buildBill(period, byDay), usage_users: buildUsageUsers(byAccount, identities) };
  }

  /** One scan of the subtree's aggregates, summed both per (day, model) and per (account, model). */
  private async subtreeSums(scope: SQL, period: Period) {
    const rows = await this.db.select({ day: usageDaily.day, accountId: usageDaily.accountId, model: usageDaily.model, ...sums })
      .from(usageDaily)
      .where(and(scope, between(usageDaily.day, period.start, period.end)))
      .groupBy(sql`grouping sets ((${usageDaily.day}, ${usageDaily.model}), (${usageDaily.accountId}, ${usageDaily.model}))`);
    const byDay: (UsageSums & { day: string; model: string })[] = [];
    const byAccount: (UsageSums & { accountId: number; model: string })[] = [];
    for (const r of rows) {
      if (r.day !== null) byDay.push({ ...r, day: r.day });
      else if (r.accountId !== null) byAccount.push({ ...r, accountId: r.accountId });
    }
    return { byDay, byAccount };
  }
}
