import { inArray } from 'drizzle-orm';
import type { Db } from '../../adapters/storage/database';
import { accounts } from '../../adapters/storage/schema';
import type { AccountCache, AccountRow } from '../../state/accounts/account-cache';
import { PatternTable, parseLevelMapper, parseModelMapper, type PatternEntry } from '../../domain/mapping/mappers';
import type { ModelLimitMap } from '../../domain/mapping/model-limits';
import { accountChecks } from '../limits/account-limits';
import type { LimitCheck } from '../limits/counters';
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
  /** The account's own RPM…TPD checks. */
  checks: LimitCheck[];
  /** Root and Owners bring the provider keys: no balance check, nothing charged. */
  exempt: boolean;
}

const lenient = <T>(fn: () => PatternEntry<T>[]): PatternEntry<T>[] => {
  try { return fn(); } catch { return []; }
};

export function limitTable(map: ModelLimitMap | null | undefined): PatternTable<ModelLimit> {
  return new PatternTable(Object.entries(map ?? {}).map(([pattern, value]) => ({ pattern, value })));
}

/** IDs on the DNA path above the account itself: `.1.3.12.` → [3, 1] for account 12 (nearest first). */
export function ancestorIds(dna: string, selfId: number): number[] {
  return dna.split('.').filter(Boolean).map(Number).filter((id) => Number.isInteger(id) && id !== selfId).reverse();
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
    const ids = ancestorIds(row.dna, row.id);
    const ancestors = ids.length
      ? await this.db.select({ id: accounts.id, ownerId: accounts.ownerId, modelMapper: accounts.modelMapper }).from(accounts).where(inArray(accounts.id, ids))
      : [];
    const byId = new Map(ancestors.map((a) => [a.id, a]));
    // Another tenant's account (Root above an Owner) maps nothing for this one.
    const inherited = ids.map((id) => byId.get(id)).filter((a) => a !== undefined && a.ownerId === row.ownerId).map((a) => a!.modelMapper);
    return buildProfile(row, inherited);
  }
}

/**
 * An account's profile from its row and the ModelMappers of its ancestors within the tenant
 * (nearest first). Pure: unreadable mapper text maps nothing rather than failing the call.
 */
export function buildProfile(row: AccountRow, ancestorModelMappers: readonly string[] = []): AccountProfile {
  const modelMappers: PatternTable<string>[] = [];
  for (const text of [row.modelMapper, ...ancestorModelMappers]) {
    if (!text) continue;
    const entries = lenient(() => parseModelMapper(text));
    if (entries.length) modelMappers.push(new PatternTable(entries));
  }
  return {
    row,
    modelMappers,
    levelMapper: new PatternTable(lenient(() => parseLevelMapper(row.levelMapper))),
    modelLimits: limitTable(row.modelLimits),
    ips: parseAllowIps(row.allowIps),
    resources: parseResources(row.resources),
    models: parseAllowModels(row.allowModels),
    levels: parseAllowLevels(row.allowLevels),
    checks: accountChecks(row),
    exempt: row.role === 'root' || row.role === 'owner',
  };
}
