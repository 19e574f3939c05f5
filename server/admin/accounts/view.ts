import { count, inArray } from 'drizzle-orm';
import type { Account } from '../../../contract/accounts/schemas';
import type { Db, Tx } from '../../adapters/storage/database';
import { accountKeys, accounts, creditGrants } from '../../adapters/storage/schema';
import type { AccountRow } from '../../state/accounts/account-cache';
import { activeGrantsOf } from '../../state/credits/ledger';
import { roundCredit } from '../../../contract/accounts/credit';

type Card = typeof creditGrants.$inferSelect;

export { roundCredit };

export function cardView(c: Card) {
  return {
    amount: roundCredit(c.amount),
    balance: roundCredit(c.balance),
    granted_at: c.grantedAt.toISOString(),
    expires_at: c.expiresAt.toISOString(),
    reference: c.reference,
  };
}

export interface ViewExtras {
  cards: Card[];
  pending: number;
  children: number;
  keyHint: string;
}

export function toAccount(a: AccountRow, x: ViewExtras): Account {
  const onCards = x.cards.reduce((s, c) => s + c.balance, 0);
  return {
    ID: a.id,
    ParentID: a.parentId,
    OwnerID: a.ownerId,
    DNA: a.dna,
    Name: a.name,
    Email: a.email,
    Alias: a.alias,
    BillingEmail: a.billingEmail,
    QRCode: a.qrCode,
    Role: a.role,
    Level: a.level,
    Gear: a.gear,
    Tier: a.tier,
    Factor: a.factor,
    Rates: a.rates,
    Status: a.status,
    Suspended: a.suspended,
    // Cards less overdraft (served cost they could not cover) less usage not yet deducted: negative while in debt.
    Balance: roundCredit(onCards - Number(a.overdraft ?? 0) - x.pending),
    CreditBalance: x.cards.map(cardView),
    DailyLimit: a.dailyLimit,
    HardLimit: a.hardLimit,
    SoftLimit: a.softLimit,
    UserLimit: a.userLimit,
    AutoQuota: a.autoQuota,
    RPM: a.rpm,
    RPH: a.rph,
    RPD: a.rpd,
    TPM: a.tpm,
    TPH: a.tph,
    TPD: a.tpd,
    Resources: a.resources,
    AllowIPs: a.allowIps,
    AllowModels: a.allowModels,
    AllowLevels: a.allowLevels,
    ModelMapper: a.modelMapper,
    LevelMapper: a.levelMapper,
    ModelLimits: a.modelLimits ?? {},
    Children: x.children,
    KeyHint: x.keyHint,
    CreatedAt: a.createdAt.toISOString(),
    UpdatedAt: a.updatedAt.toISOString(),
  };
}

/** Views of a page of accounts: three batched reads (cards, child counts, key hints), not one per row. */
export async function accountViews(db: Db | Tx, rows: AccountRow[], pending: (id: number) => number): Promise<Account[]> {
  const ids = rows.map((r) => r.id);
  if (ids.length === 0) return [];
  const [cards, children, keys] = await Promise.all([
    activeGrantsOf(db, ids),
    db.select({ parentId: accounts.parentId, n: count() }).from(accounts).where(inArray(accounts.parentId, ids)).groupBy(accounts.parentId),
    db.select({ accountId: accountKeys.accountId, hint: accountKeys.hint }).from(accountKeys).where(inArray(accountKeys.accountId, ids)),
  ]);
  const cardsOf = new Map<number, Card[]>();
  for (const c of cards) {
    let list = cardsOf.get(c.accountId);
    if (!list) cardsOf.set(c.accountId, (list = []));
    list.push(c);
  }
  const childCount = new Map(children.map((c) => [c.parentId, c.n]));
  const hintOf = new Map(keys.map((k) => [k.accountId, k.hint]));
  return rows.map((r) => toAccount(r, {
    cards: cardsOf.get(r.id) ?? [],
    pending: pending(r.id),
    children: childCount.get(r.id) ?? 0,
    keyHint: hintOf.get(r.id) ?? '',
  }));
}
