import { and, between, eq, inArray, sql, type AnyColumn, type SQL } from 'drizzle-orm';
import type { Actor } from '../../../contract/services';
import type { BillingService } from '../../../contract/billing/service';
import type { BillInfo, BillQuery, DescendantBillInfo, DescendantBillQuery } from '../../../contract/billing/schemas';
import { badRequest } from '../../../contract/errors';
import type { Db } from '../../adapters/storage/database';
import { accounts, usageDaily, usageSubtreeDaily } from '../../adapters/storage/schema';
import { buildBill, buildUsageUsers, type AccountIdentity, type UsageSums } from './bill';
import { resolvePeriod, type Period } from './period';
import { resolveBillUser, scopeCondition, type BillScope } from './user-filter';
import { readBillDays } from './rollups';
import { FreshCache } from '../../core/fresh-cache';
import { today } from './period';

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
 * Bills read the rollups only, never the raw records: the caller's own bill through
 * usage_daily's (account, day, model) key, a subtree's days through usage_subtree_daily
 * (rollups.ts: days × models rows whatever the subtree's size).
 */
export class Billing implements BillingService {
  private readonly cache: FreshCache<DescendantBillInfo>;
  private readonly own: FreshCache<BillInfo>;

  /** `usageVersion` moves whenever this instance writes usage (the recorder's committed batches). */
  constructor(private readonly db: Db, usageVersion: () => number = () => 0) {
    this.cache = new FreshCache(usageVersion);
    this.own = new FreshCache(usageVersion, 1000, 1024);
  }

  bill(actor: Actor, query: BillQuery): Promise<BillInfo> {
    return this.own.get(JSON.stringify([actor.caller.id, today(), query]), () => this.computeBill(actor, query));
  }

  private async computeBill({ caller }: Actor, query: BillQuery): Promise<BillInfo> {
    const period = resolvePeriod(query);
    const rows = await this.db.select({
      day: usageDaily.day, model: usageDaily.model,
      requests: usageDaily.requests, prompt: usageDaily.prompt, completion: usageDaily.completion,
      reasoning: usageDaily.reasoning, cached: usageDaily.cached, credit: usageDaily.creditUsed, units: usageDaily.units,
    }).from(usageDaily)
      .where(and(eq(usageDaily.accountId, caller.id), between(usageDaily.day, period.start, period.end)));
    return buildBill(period, rows.map((r) => ({ ...r, credit: Number(r.credit), units: r.units ?? undefined })));
  }

  descendants(actor: Actor, query: DescendantBillQuery): Promise<DescendantBillInfo> {
    // "today" is part of the key: a bill asked for by days or without dates moves at midnight UTC.
    return this.cache.get(JSON.stringify([actor.caller.id, today(), query]), () => this.computeDescendants(actor, query));
  }

  private async computeDescendants({ caller }: Actor, query: DescendantBillQuery): Promise<DescendantBillInfo> {
    const { user, u, ...dates } = query;
    if (user !== undefined && u !== undefined) throw badRequest('user and u: send only one of user, u');
    const period = resolvePeriod(dates);
    const who = user ?? u;
    const scope: BillScope = who === undefined ? { kind: 'all' } : await resolveBillUser(this.db, caller, who);
    const [byDay, byAccount] = await Promise.all([readBillDays(this.db, caller, scope, period), this.accountSums(scopeCondition(caller, scope), period)]);
    const ids = [...new Set(byAccount.map((r) => r.accountId))];
    const identities = new Map<number, AccountIdentity>();
    if (ids.length) {
      const rows = await this.db.select({ id: accounts.id, name: accounts.name, alias: accounts.alias, email: accounts.email, dna: accounts.dna })
        .from(accounts).where(inArray(accounts.id, ids));
      for (const r of rows) identities.set(r.id, r);
    }
    return { ...buildBill(period, byDay), usage_users: buildUsageUsers(byAccount, identities) };
  }

  /** usage_users: per (account, model) totals of the period (per-account rows of usage_daily; the only read that grows with accounts). */
  private async accountSums(scope: SQL, period: Period): Promise<(UsageSums & { accountId: number; model: string })[]> {
    return this.db.select({ accountId: usageDaily.accountId, model: usageDaily.model, ...sums })
      .from(usageDaily)
      .where(and(scope, between(usageDaily.day, period.start, period.end)))
      .groupBy(usageDaily.accountId, usageDaily.model);
  }
}
