import { and, between, eq } from 'drizzle-orm';
import type { PeriodUsage, UserInfo } from '../../../contract/dashboard/schemas';
import type { Db } from '../../adapters/storage/database';
import { creditGrants, usageDaily } from '../../adapters/storage/schema';
import type { AccountRow } from '../../state/accounts/account-cache';
import { credit } from '../billing/bill';
import { fromRollupModel } from '../../domain/usage/batch-usage';

type Card = typeof creditGrants.$inferSelect;

/** The flat user_info: the account's own fields, its unexpired cards and its spendable balance. */
export function toUserInfo(a: AccountRow, cards: Card[], pendingCredit: number): UserInfo {
  const onCards = cards.reduce((s, c) => s + c.balance, 0);
  return {
    object: 'user_info',
    id: a.id,
    name: a.name,
    email: a.email,
    alias: a.alias,
    billing_email: a.billingEmail,
    dna: a.dna,
    parent_id: a.parentId,
    owner_id: a.ownerId,
    role: a.role,
    is_owner: a.role === 'root' || a.role === 'owner',
    level: a.level,
    gear: a.gear,
    tier: a.tier,
    rates: a.rates,
    factor: a.factor,
    status: a.status,
    suspended: a.suspended,
    // Usage already recorded but still in the write buffer is spent money, and so is served
    // cost the cards could not cover (overdraft): negative while the account owes.
    balance: credit(onCards - a.overdraft - pendingCredit),
    credit_balance: cards.map((c) => ({
      amount: credit(c.amount), balance: credit(c.balance), granted_at: c.grantedAt.toISOString(), expires_at: c.expiresAt.toISOString(), reference: c.reference,
    })),
    daily_limit: a.dailyLimit,
    hard_limit: a.hardLimit,
    soft_limit: a.softLimit,
    user_limit: a.userLimit,
    auto_quota: a.autoQuota,
    rpm: a.rpm,
    rph: a.rph,
    rpd: a.rpd,
    tpm: a.tpm,
    tph: a.tph,
    tpd: a.tpd,
    resources: a.resources,
    allow_ips: a.allowIps,
    allow_models: a.allowModels,
    allow_levels: a.allowLevels,
    model_mapper: a.modelMapper,
    level_mapper: a.levelMapper,
    model_limits: a.modelLimits ?? {},
    created_at: a.createdAt.toISOString(),
    updated_at: a.updatedAt.toISOString(),
  };
}

const empty = (): PeriodUsage => ({ Requests: 0, Prompt: 0, Completion: 0, Reasoning: 0, Cached: 0, CreditUsed: 0, ModelUsage: {} });

/**
 * Today's and this month's usage (UTC) of one account: one read of at most a month of its
 * usage_daily rows through the (account, day, model) key.
 */
export async function liveUsage(db: Db, accountId: number, now = new Date()): Promise<{ daily_usage: PeriodUsage; monthly_usage: PeriodUsage }> {
  const today = now.toISOString().slice(0, 10);
  const monthStart = `${today.slice(0, 7)}-01`;
  const rows = await db.select({
    day: usageDaily.day, model: usageDaily.model, requests: usageDaily.requests, prompt: usageDaily.prompt,
    completion: usageDaily.completion, reasoning: usageDaily.reasoning, cached: usageDaily.cached, credit: usageDaily.creditUsed,
  }).from(usageDaily).where(and(eq(usageDaily.accountId, accountId), between(usageDaily.day, monthStart, today)));
  const daily = empty();
  const monthly = empty();
  for (const r of rows) {
    for (const p of r.day === today ? [daily, monthly] : [monthly]) {
      const m = (p.ModelUsage[r.model] ??= { Requests: 0, Prompt: 0, Completion: 0, Reasoning: 0, Cached: 0, CreditUsed: 0 });
      // Provider batches' rows (`gpt-4o (batch)`) also add up apart.
      const batch = fromRollupModel(r.model).batch ? (p.Batch ??= { Requests: 0, Prompt: 0, Completion: 0, Reasoning: 0, Cached: 0, CreditUsed: 0 }) : undefined;
      for (const target of batch ? [p, m, batch] : [p, m]) {
        target.Requests += r.requests;
        target.Prompt += r.prompt;
        target.Completion += r.completion;
        target.Reasoning += r.reasoning;
        target.Cached += r.cached;
        target.CreditUsed += Number(r.credit);
      }
    }
  }
  for (const p of [daily, monthly]) {
    p.CreditUsed = credit(p.CreditUsed);
    if (p.Batch) p.Batch.CreditUsed = credit(p.Batch.CreditUsed);
    for (const m of Object.values(p.ModelUsage)) m.CreditUsed = credit(m.CreditUsed);
  }
  return { daily_usage: daily, monthly_usage: monthly };
}
