import { ancestorIdsOf } from '../../domain/accounts/dna';
import { inArray } from 'drizzle-orm';
import type { Db } from '../../adapters/storage/database';
import { accounts } from '../../adapters/storage/schema';
import type { AccountCache, AccountRow } from '../../state/accounts/account-cache';
import { PatternTable, parseLevelMapper, type PatternEntry } from '../../domain/mapping/mappers';
import { modelMapperTables } from '../../domain/mapping/routed-model';
import type { ModelLimitMap } from '../../domain/mapping/model-limits';
import { accountChecks, modelChecks } from '../limits/account-limits';
import { counterKeys, periodOf, type CreditClaim, type RateClaim, type SpendClaim } from './store';
import { parseAllowIps, parseAllowLevels, parseAllowModels, parseResources, type AllowList } from '../../domain/access/allow-lists';

export type ModelLimit = { rpm?: number; tpm?: number };

/** Everything the proxy reads from an account row, parsed once per change of the row. */
export interface AccountProfile {
  row: AccountRow;
  /** The account's ModelMapper, then its ancestors' within the tenant, nearest first. */
  modelMappers: PatternTable<string>[];
  levelMapper: PatternTable<number>;
  modelLimits: PatternTable<ModelLimit>;
  ips: AllowList<string>;
  resources: AllowList<string>;
  models: AllowList<string>;
  levels: AllowList<number>;
  /** The account's own RPM…TPD claims. */
  checks: RateClaim[];
  /** Root and Owners bring the provider keys: no balance check, nothing charged. */
  exempt: boolean;
  /**
   * Spend caps that bind this account's calls: its own and those of its ancestors within the
   * tenant (nearest first), each covering the capped account's whole subtree. Empty when exempt.
   */
  caps: CapSource[];
  /** Claims derived from the above, built on first use and kept with the profile. */
  memo: ProfileMemo;
}

/** DailyLimit, HardLimit and SoftLimit of one account on the caller's DNA path; null: none. */
export interface CapSource {
  accountId: number;
  dna: string;
  daily: number | null;
  hard: number | null;
  soft: number | null;
}

export interface ProfileMemo {
  credit: CreditClaim | null;
  /** Spend claims of the UTC day they were built for. */
  spendDay: string;
  spend: SpendClaim[];
  /** The account's rate claims plus a model's rpm/tpm, per model, for the Owner's MODEL_LIMITS below. */
  rates: Map<string, RateClaim[]>;
  ratesOwner: PatternTable<ModelLimit> | null;
}

/** Caps of 0 or below are no cap, as 0 is no limit for RPM…TPD. */
const cap = (v: number | null | undefined): number | null => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : null);

export type CapFields = { id: number; dna: string; dailyLimit: number | null; hardLimit: number | null; softLimit: number | null };

function capSource(a: CapFields): CapSource | null {
  const daily = cap(a.dailyLimit);
  const hard = cap(a.hardLimit);
  const soft = cap(a.softLimit);
  return daily === null && hard === null && soft === null ? null : { accountId: a.id, dna: a.dna, daily, hard, soft };
}

const lenient = <T>(fn: () => PatternEntry<T>[]): PatternEntry<T>[] => {
  try { return fn(); } catch { return []; }
};

export function limitTable(map: ModelLimitMap | null | undefined): PatternTable<ModelLimit> {
  return new PatternTable(Object.entries(map ?? {}).map(([pattern, value]) => ({ pattern, value })));
}

/**
 * Account profiles in memory, keyed by account ID. A profile is valid while its row is the
 * one the AccountCache hands out; any invalidation of the account or of an ancestor drops it,
 * and the next request rebuilds it (one query for the ancestors' mappers).
 */
export class AccountProfiles {
  private byId = new Map<number, AccountProfile>();
  private loading = new Map<number, Promise<AccountProfile>>();
  private generation = 0;

  constructor(private readonly db: Db, cache: AccountCache) {
    cache.onInvalidate((id) => this.invalidate(id));
  }

  /** Synchronous hit path. */
  peek(row: AccountRow): AccountProfile | undefined {
    const p = this.byId.get(row.id);
    return p && p.row === row ? p : undefined;
  }

  async load(row: AccountRow): Promise<AccountProfile> {
    const hit = this.peek(row);
    if (hit) return hit;
    const pending = this.loading.get(row.id);
    if (pending) {
      const p = await pending;
      if (p.row === row) return p;
    }
    const generation = this.generation;
    const promise = this.build(row).finally(() => this.loading.delete(row.id));
    this.loading.set(row.id, promise);
    const profile = await promise;
    // An invalidation during the read must win: use the profile once, do not keep it.
    if (generation === this.generation) this.byId.set(row.id, profile);
    return profile;
  }

  invalidate(accountId: number | null): void {
    this.generation++;
    if (accountId === null) {
      this.byId.clear();
      return;
    }
    const marker = `.${accountId}.`;
    for (const [id, p] of this.byId) if (id === accountId || p.row.dna.includes(marker)) this.byId.delete(id);
  }

  private async build(row: AccountRow): Promise<AccountProfile> {
    // Nearest first: the parent's mapper outranks the grandparent's.
    const ids = ancestorIdsOf(row.dna).reverse();
    const ancestors = ids.length
      ? await this.db.select({
        id: accounts.id, ownerId: accounts.ownerId, dna: accounts.dna, modelMapper: accounts.modelMapper,
        dailyLimit: accounts.dailyLimit, hardLimit: accounts.hardLimit, softLimit: accounts.softLimit,
      }).from(accounts).where(inArray(accounts.id, ids))
      : [];
    const byId = new Map(ancestors.map((a) => [a.id, a]));
    // Another tenant's account (Root above an Owner) maps and caps nothing for this one.
    const inTenant = ids.map((id) => byId.get(id)).filter((a) => a !== undefined && a.ownerId === row.ownerId).map((a) => a!);
    return buildProfile(row, inTenant.map((a) => a.modelMapper), inTenant);
  }
}

/**
 * An account's profile from its row and its ancestors within the tenant (nearest first):
 * their ModelMappers and spend caps. Pure: unreadable mapper text maps nothing rather than
 * failing the call.
 */
export function buildProfile(row: AccountRow, ancestorModelMappers: readonly string[] = [], ancestorCaps: readonly CapFields[] = []): AccountProfile {
  const exempt = row.role === 'root' || row.role === 'owner';
  const caps: CapSource[] = [];
  if (!exempt) {
    for (const a of [row, ...ancestorCaps]) {
      const c = capSource(a);
      if (c) caps.push(c);
    }
  }
  return {
    row,
    modelMappers: modelMapperTables([row.modelMapper, ...ancestorModelMappers]),
    levelMapper: new PatternTable(lenient(() => parseLevelMapper(row.levelMapper))),
    modelLimits: limitTable(row.modelLimits),
    ips: parseAllowIps(row.allowIps),
    resources: parseResources(row.resources),
    models: parseAllowModels(row.allowModels),
    levels: parseAllowLevels(row.allowLevels),
    checks: accountChecks(row),
    exempt,
    caps,
    memo: { credit: null, spendDay: '', spend: [], rates: new Map(), ratesOwner: null },
  };
}

/** The credit claim of a charged account (null for Root and Owners). */
export function creditClaim(p: AccountProfile, floor: number, lowAt: number | null): CreditClaim | null {
  if (p.exempt) return null;
  const m = p.memo;
  if (!m.credit || m.credit.floor !== floor || m.credit.lowAt !== lowAt) {
    m.credit = { key: counterKeys.credit(p.row.ownerId, p.row.id), accountId: p.row.id, floor, lowAt };
  }
  return m.credit;
}


/**
 * Spend claims at `now`: per capped account on the path, its day (DailyLimit) then its month
 * (HardLimit, SoftLimit). Rebuilt once per UTC day.
 */
export function spendClaims(p: AccountProfile, now: number): readonly SpendClaim[] {
  if (p.caps.length === 0) return p.memo.spend;
  const m = p.memo;
  const day = periodOf('day', now);
  if (m.spendDay === day.period) return m.spend;
  const month = periodOf('month', now);
  const out: SpendClaim[] = [];
  const ownerId = p.row.ownerId;
  for (const c of p.caps) {
    if (c.daily !== null) {
      out.push({ key: counterKeys.spend(ownerId, c.accountId, day.period), accountId: c.accountId, ownerId, dna: c.dna, kind: 'day', ...day, cap: c.daily, code: 'daily_limit_reached', alertAt: null });
    }
    if (c.hard !== null || c.soft !== null) {
      out.push({ key: counterKeys.spend(ownerId, c.accountId, month.period), accountId: c.accountId, ownerId, dna: c.dna, kind: 'month', ...month, cap: c.hard, code: 'hard_limit_reached', alertAt: c.soft });
    }
  }
  m.spendDay = day.period;
  m.spend = out;
  return out;
}

/** At most this many models' rate claims are kept per profile. */
const MODEL_CLAIMS_KEPT = 64;

/** The account's rate claims and the model's limit (account ModelLimits, else the Owner's), kept per model. */
export function rateClaims(p: AccountProfile, model: string, ownerLimits: PatternTable<ModelLimit>): readonly RateClaim[] {
  const m = p.memo.rates;
  // A saved MODEL_LIMITS is a new table: the claims kept for the old one go.
  if (p.memo.ratesOwner !== ownerLimits) {
    m.clear();
    p.memo.ratesOwner = ownerLimits;
  }
  let claims = m.get(model);
  if (claims) return claims;
  const limit = p.modelLimits.size ? p.modelLimits.match(model) ?? ownerLimits.match(model) : ownerLimits.match(model);
  claims = limit ? p.checks.concat(modelChecks(p.row.ownerId, p.row.id, model, limit)) : p.checks;
  if (m.size >= MODEL_CLAIMS_KEPT) m.clear();
  m.set(model, claims);
  return claims;
}
