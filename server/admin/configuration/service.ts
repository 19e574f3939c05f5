import { and, eq, isNotNull, like, ne } from 'drizzle-orm';
import type { Actor } from '../../../contract/services';
import type { OwnerConfigService } from '../../../contract/config/service';
import { CONFIG_KEYS, READABLE_CONFIG_KEYS, type ConfigKey, type ConfigUpdate, type ConfUpdate, type ConfView } from '../../../contract/config/schemas';
import { badRequest } from '../../../contract/errors';
import type { Db, Tx } from '../../adapters/storage/database';
import { accounts, providerKeys } from '../../adapters/storage/schema';
import { PURPOSE, type Vault } from '../../adapters/security/crypto';
import { recordOperation } from '../../state/oplog/oplog';
import type { KeyPool } from '../../state/provider-keys/key-pool';
import type { Settings } from '../../core/settings';
import type { AccountCache } from '../../state/accounts/account-cache';
import { formatEntries, mergeEntries, parseLevelMapper, parseModelFailover, parseModelMapper, parseResources } from '../../domain/mapping/mappers';
import { applyModelLimitsChange, type ModelLimitMap } from '../../domain/mapping/model-limits';
import { asBadRequest, validateConfigValue } from './validate';
import type { OwnerConfigStore } from '../../state/owner-config/store';

/** Internal keys kept beside the `/x-config` ones; never listed by `/x-config`. */
export const LOG_ENABLE_KEY = '_LOG_ENABLE';

export interface ConfigServiceDeps {
  db: Db;
  vault: Vault;
  store: OwnerConfigStore;
  pool: KeyPool;
  accountCache: AccountCache;
  settings: Pick<Settings, 'userMinBalance' | 'userApiBalance'>;
  /** Flushes buffered usage records; the proxy provides it. */
  flushUsage: () => Promise<number>;
}

export class OwnerConfig implements OwnerConfigService {
  constructor(private readonly d: ConfigServiceDeps) {}

  async view({ caller }: Actor): Promise<ConfView> {
    const r = await this.d.store.routing(caller.ownerId);
    const keys = await this.d.db.select().from(providerKeys).where(eq(providerKeys.ownerId, caller.ownerId)).orderBy(providerKeys.id);
    const now = Date.now();
    return {
      Resources: r.resources,
      LevelMapper: Object.fromEntries(r.levelMapperEntries.map((e) => [e.pattern, e.value])),
      ModelMapper: Object.fromEntries(r.modelMapperEntries.map((e) => [e.pattern, e.value])),
      ModelFailover: Object.fromEntries(r.failoverEntries.map((e) => [e.pattern, e.value])),
      ModelLimits: r.modelLimits,
      SwitchOver: Object.fromEntries([...r.switchOver].map(([k, v]) => [String(k), v])),
      SleepingKeys: keys.flatMap((k) => {
        const until = this.d.pool.sleepingUntil(k.id, now);
        return until === null || !k.status ? [] : [{ ID: k.id, Name: k.name, Level: k.level, Until: new Date(until).toISOString() }];
      }),
      DisabledKeys: keys.filter((k) => !k.status).map((k) => ({
        ID: k.id, Name: k.name, Level: k.level, Reason: k.disabledReason ?? 'disabled by the Owner', At: k.disabledAt?.toISOString() ?? null,
      })),
      UserMinBalance: this.d.settings.userMinBalance,
      UserApiBalance: this.d.settings.userApiBalance,
    };
  }

  async batch(actor: Actor, input: ConfUpdate) {
    const fields = Object.keys(input);
    if (fields.length === 0) throw badRequest('Nothing to update: send at least one field');
    const ownerId = actor.caller.ownerId;
    const values = await this.d.store.values(ownerId);
    const changes: Partial<Record<string, string | null>> = {};
    const str = (v: string) => (v.trim() === '' ? null : v.trim());
    // Validate everything before writing anything.
    const modelMapper = input.ModelMapper !== undefined ? asBadRequest(() => parseModelMapper(input.ModelMapper!, 'ModelMapper')) : undefined;
    const levelMapper = input.LevelMapper !== undefined ? asBadRequest(() => parseLevelMapper(input.LevelMapper!, 'LevelMapper')) : undefined;
    if (input.ModelFailover !== undefined) asBadRequest(() => parseModelFailover(input.ModelFailover!, 'ModelFailover'));
    if (input.Resources !== undefined) asBadRequest(() => parseResources(input.Resources!, 'Resources'));
    if (modelMapper) changes.MODEL_MAPPER = str(formatEntries(modelMapper));
    if (levelMapper) changes.LEVEL_MAPPER = str(formatEntries(levelMapper));
    if (input.ModelFailover !== undefined) changes.MODEL_FAILOVER = str(input.ModelFailover);
    if (input.Resources !== undefined) changes.RESOURCES = str(input.Resources);
    if (input.ModelLimits !== undefined) {
      const current = (await this.d.store.routing(ownerId)).modelLimits;
      const next = asBadRequest(() => applyModelLimitsChange(current, input.ModelLimits));
      changes.MODEL_LIMITS = Object.keys(next).length ? JSON.stringify(next) : null;
    }
    if (input.LogEnable !== undefined) changes[LOG_ENABLE_KEY] = input.LogEnable ? 'true' : null;

    let deletedKeys: number | undefined;
    let cascaded = 0;
    await this.d.db.transaction(async (tx) => {
      await this.d.store.write(tx, ownerId, changes as Record<ConfigKey, string | null>);
      cascaded = await this.cascade(tx, actor, { modelMapper, levelMapper, modelLimitsChange: input.ModelLimits });
      if (input.DelKeys) {
        const gone = await tx.delete(providerKeys)
          .where(and(eq(providerKeys.ownerId, ownerId), eq(providerKeys.status, false), isNotNull(providerKeys.disabledReason)))
          .returning({ id: providerKeys.id });
        deletedKeys = gone.length;
      }
      await recordOperation(tx, actor, { action: 'update_conf', targetId: ownerId, details: { fields, cascaded, deleted_keys: deletedKeys } });
    });
    await this.d.store.refresh(ownerId);
    if (cascaded) this.d.accountCache.invalidateAll();
    let reloadedKeys: number | undefined;
    if (input.LoadKeys || input.DelKeys) reloadedKeys = await this.d.pool.reload(ownerId);
    const flushedRecords = input.SaveCache ? await this.d.flushUsage() : undefined;
    return {
      success: true as const, applied: fields, cascaded,
      ...(input.LoadKeys ? { reloadedKeys } : {}),
      ...(deletedKeys !== undefined ? { deletedKeys } : {}),
      ...(flushedRecords !== undefined ? { flushedRecords } : {}),
    };
  }

  /**
   * ModelMapper and ModelLimits cascade: descendants that set their own value for a pattern
   * get the Owner's instead, so the batch change takes effect everywhere. LevelMapper is
   * synchronized the same way, but only into descendants that have a LevelMapper of their own.
   */
  private async cascade(tx: Tx, actor: Actor, c: {
    modelMapper?: ReturnType<typeof parseModelMapper>;
    levelMapper?: ReturnType<typeof parseLevelMapper>;
    modelLimitsChange?: unknown;
  }): Promise<number> {
    if (!c.modelMapper?.length && !c.levelMapper?.length && c.modelLimitsChange === undefined) return 0;
    const descendants = await tx.select({ id: accounts.id, modelMapper: accounts.modelMapper, levelMapper: accounts.levelMapper, modelLimits: accounts.modelLimits })
      .from(accounts)
      .where(and(like(accounts.dna, `${actor.caller.dna}%`), ne(accounts.id, actor.caller.id)));
    let changed = 0;
    for (const d of descendants) {
      const set: { modelMapper?: string; levelMapper?: string; modelLimits?: ModelLimitMap } = {};
      if (c.modelMapper?.length && d.modelMapper) {
        const next = formatEntries(mergeEntries(safeParse(() => parseModelMapper(d.modelMapper)), c.modelMapper));
        if (next !== d.modelMapper) set.modelMapper = next;
      }
      if (c.levelMapper?.length && d.levelMapper) {
        const next = formatEntries(mergeEntries(safeParse(() => parseLevelMapper(d.levelMapper)), c.levelMapper));
        if (next !== d.levelMapper) set.levelMapper = next;
      }
      if (c.modelLimitsChange !== undefined && Object.keys(d.modelLimits).length) {
        const next = applyModelLimitsChange(d.modelLimits, c.modelLimitsChange);
        if (JSON.stringify(next) !== JSON.stringify(d.modelLimits)) set.modelLimits = next;
      }
      if (Object.keys(set).length) {
        await tx.update(accounts).set({ ...set, updatedAt: new Date() }).where(eq(accounts.id, d.id));
        changed++;
      }
    }
    return changed;
  }

  async get({ caller }: Actor) {
    const values = await this.d.store.values(caller.ownerId);
    const configs = Object.fromEntries(READABLE_CONFIG_KEYS.map((k) => [k, values.get(k) ?? ''])) as Record<(typeof READABLE_CONFIG_KEYS)[number], string>;
    return { success: true as const, oid: caller.ownerId, configs };
  }

  async put(actor: Actor, input: ConfigUpdate) {
    const entries = Object.entries(input).filter(([, v]) => v !== undefined) as [ConfigKey, string][];
    if (entries.length === 0) throw badRequest(`Nothing to update: send at least one of ${CONFIG_KEYS.join(', ')}`);
    for (const [k, v] of entries) validateConfigValue(k, v);
    const changes: Partial<Record<ConfigKey, string | null>> = {};
    for (const [k, v] of entries) {
      if (v === '') changes[k] = null;
      else changes[k] = k === 'EMAIL_PASS' ? this.d.vault.encrypt(PURPOSE.configSecret, v) : v;
    }
    const updated = entries.filter(([, v]) => v !== '').map(([k]) => k);
    const removed = entries.filter(([, v]) => v === '').map(([k]) => k);
    await this.d.db.transaction(async (tx) => {
      await this.d.store.write(tx, actor.caller.ownerId, changes);
      await recordOperation(tx, actor, { action: 'update_config', targetId: actor.caller.ownerId, details: { updated, removed } });
    });
    await this.d.store.refresh(actor.caller.ownerId);
    return { success: true as const, oid: actor.caller.ownerId, updated, removed };
  }

  async remove(actor: Actor, keys: ConfigKey[]) {
    const unique = [...new Set(keys)];
    await this.d.db.transaction(async (tx) => {
      await this.d.store.write(tx, actor.caller.ownerId, Object.fromEntries(unique.map((k) => [k, null])));
      await recordOperation(tx, actor, { action: 'delete_config', targetId: actor.caller.ownerId, details: { deleted: unique } });
    });
    await this.d.store.refresh(actor.caller.ownerId);
    return { success: true as const, oid: actor.caller.ownerId, deleted: unique };
  }
}

function safeParse<T>(fn: () => T[]): T[] {
  try { return fn(); } catch { return []; }
}
