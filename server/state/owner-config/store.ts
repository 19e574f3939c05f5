import { and, eq, inArray } from 'drizzle-orm';
import type { ConfigKey } from '../../../contract/config/schemas';
import type { Db, Tx } from '../../adapters/storage/database';
import { ownerConfigs } from '../../adapters/storage/schema';
import { PatternTable, parseLevelMapper, parseModelFailover, parseModelMapper, parseSwitchOver, type PatternEntry } from '../../domain/mapping/mappers';
import { parseResourcePaths } from '../../domain/access/allow-lists';
import { parseModelLimitsJson, type ModelLimitMap } from '../../domain/mapping/model-limits';
import { parsePricing, type PricingOverrides } from '../../domain/pricing/overrides';
import { parseUnpricedPolicy, REFUSE_UNPRICED, type UnpricedPolicy } from '../../domain/pricing/unpriced-policy';
import { DEFAULT_OUTPUT_LIMIT, parseOutputLimit } from '../../domain/pricing/estimate';
import { DEFAULT_UNSUPPORTED_TOOLS, parseUnsupportedTools, type UnsupportedToolsPolicy } from '../../domain/providers/unsupported-tools';

/** An Owner's configuration parsed once per change, as the proxy's hot path reads it. */
export interface OwnerRouting {
  modelMapperEntries: PatternEntry<string>[];
  modelMapper: PatternTable<string>;
  levelMapperEntries: PatternEntry<number>[];
  levelMapper: PatternTable<number>;
  failoverEntries: PatternEntry<string[]>[];
  failover: PatternTable<string[]>;
  switchOver: Map<number, number>;
  resources: string[];
  modelLimits: ModelLimitMap;
  pricing: PricingOverrides;
  /** UNPRICED_MODEL_POLICY: refuse (default) or bill at a fallback price. */
  unpricedPolicy: UnpricedPolicy;
  /** DEFAULT_OUTPUT_LIMIT: output reserved for a model the catalogue gives no output limit. */
  defaultOutputLimit: number;
  /** UNSUPPORTED_TOOLS: a tool a translated call's provider lacks is dropped (default) or refused. */
  unsupportedTools: UnsupportedToolsPolicy;
}

type Listener = (ownerId: number) => void;

/**
 * Owner configuration (`/x-config` keys) with an in-memory copy per Owner. Writes go through a
 * caller's transaction; `refresh` after commit reloads the copy and tells listeners.
 */
export class OwnerConfigStore {
  private raw = new Map<number, Map<string, string>>();
  private parsed = new Map<number, OwnerRouting>();
  private listeners: Listener[] = [];
  /** Bumped per Owner by `refresh`: a read that began before it must not be kept. */
  private generations = new Map<number, number>();

  constructor(private readonly db: Db) {}

  private generation(ownerId: number): number {
    return this.generations.get(ownerId) ?? 0;
  }

  onChange(l: Listener): void {
    this.listeners.push(l);
  }

  async values(ownerId: number): Promise<Map<string, string>> {
    let m = this.raw.get(ownerId);
    if (!m) {
      const generation = this.generation(ownerId);
      const rows = await this.db.select().from(ownerConfigs).where(eq(ownerConfigs.ownerId, ownerId));
      m = new Map(rows.map((r) => [r.key, r.value]));
      if (generation === this.generation(ownerId)) this.raw.set(ownerId, m);
    }
    return m;
  }

  async routing(ownerId: number): Promise<OwnerRouting> {
    const hit = this.parsed.get(ownerId);
    if (hit) return hit;
    const generation = this.generation(ownerId);
    const values = await this.values(ownerId);
    return this.build(ownerId, values, generation === this.generation(ownerId));
  }

  /** Synchronous read for the hot path; undefined until the Owner's config was loaded once. */
  peekRouting(ownerId: number): OwnerRouting | undefined {
    return this.parsed.get(ownerId);
  }

  private build(ownerId: number, v: Map<string, string>, keep: boolean): OwnerRouting {
    // Values were validated on write; parse leniently so one bad legacy row cannot stop routing.
    const safe = <T>(fn: () => T, fallback: T) => { try { return fn(); } catch { return fallback; } };
    const modelMapperEntries = safe(() => parseModelMapper(v.get('MODEL_MAPPER') ?? ''), []);
    const levelMapperEntries = safe(() => parseLevelMapper(v.get('LEVEL_MAPPER') ?? ''), []);
    const failoverEntries = safe(() => parseModelFailover(v.get('MODEL_FAILOVER') ?? ''), []);
    const routing: OwnerRouting = {
      modelMapperEntries,
      modelMapper: new PatternTable(modelMapperEntries),
      levelMapperEntries,
      levelMapper: new PatternTable(levelMapperEntries),
      failoverEntries,
      failover: new PatternTable(failoverEntries),
      switchOver: safe(() => parseSwitchOver(v.get('SWITCH_OVER') ?? ''), new Map()),
      resources: safe(() => parseResourcePaths(v.get('RESOURCES') ?? ''), []),
      modelLimits: safe(() => parseModelLimitsJson(v.get('MODEL_LIMITS') ?? ''), {}),
      pricing: safe(() => parsePricing(v.get('PRICING') ?? ''), {}),
      unpricedPolicy: safe(() => parseUnpricedPolicy(v.get('UNPRICED_MODEL_POLICY') ?? ''), REFUSE_UNPRICED),
      defaultOutputLimit: safe(() => parseOutputLimit(v.get('DEFAULT_OUTPUT_LIMIT') ?? ''), DEFAULT_OUTPUT_LIMIT),
      unsupportedTools: safe(() => parseUnsupportedTools(v.get('UNSUPPORTED_TOOLS') ?? ''), DEFAULT_UNSUPPORTED_TOOLS),
    };
    if (keep) this.parsed.set(ownerId, routing);
    return routing;
  }

  /** Sets (string) or removes (null) keys inside `tx`. Call `refresh` once it committed. */
  async write(tx: Tx, ownerId: number, changes: Partial<Record<ConfigKey, string | null>>): Promise<void> {
    const remove = Object.entries(changes).filter(([, v]) => v === null).map(([k]) => k);
    const set = Object.entries(changes).filter(([, v]) => typeof v === 'string') as [string, string][];
    if (remove.length) await tx.delete(ownerConfigs).where(and(eq(ownerConfigs.ownerId, ownerId), inArray(ownerConfigs.key, remove)));
    for (const [key, value] of set) {
      await tx.insert(ownerConfigs).values({ ownerId, key, value })
        .onConflictDoUpdate({ target: [ownerConfigs.ownerId, ownerConfigs.key], set: { value, updatedAt: new Date() } });
    }
  }

  async refresh(ownerId: number): Promise<void> {
    this.generations.set(ownerId, this.generation(ownerId) + 1);
    this.raw.delete(ownerId);
    this.parsed.delete(ownerId);
    await this.routing(ownerId);
    for (const l of this.listeners) l(ownerId);
  }

  /** Re-reads every Owner held in memory (after change notifications may have been missed). */
  async refreshAll(): Promise<void> {
    for (const ownerId of new Set([...this.raw.keys(), ...this.parsed.keys()])) await this.refresh(ownerId);
  }
}
