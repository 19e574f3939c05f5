import { and, desc, eq, isNotNull, like, ne } from 'drizzle-orm';
import type { Actor } from '../../../contract/services';
import type { OwnerConfigService } from '../../../contract/config/service';
import { CONFIG_KEYS, READABLE_CONFIG_KEYS, type ConfigKey, type ConfigUpdate, type ConfUpdate, type ConfView } from '../../../contract/config/schemas';
import { badRequest } from '../../../contract/errors';
import type { Db, Tx } from '../../adapters/storage/database';
import { accounts, ownerConfigs, providerKeys } from '../../adapters/storage/schema';
import { PURPOSE, type Vault } from '../../adapters/security/crypto';
import { recordOperation } from '../../state/oplog/oplog';
import type { KeyPool } from '../../state/provider-keys/key-pool';
import type { Settings } from '../../core/settings';
import type { Change } from '../../state/changes/change';
import type { Changes } from '../../state/changes/state-changes';
import { formatEntries, mergeEntries, parseLevelMapper, parseModelFailover, parseModelMapper } from '../../domain/mapping/mappers';
import { parseResourcePaths } from '../../domain/access/allow-lists';
import { applyModelLimitsChange, type ModelLimitMap } from '../../domain/mapping/model-limits';
import { asBadRequest, validateConfigValue } from './validate';
import { formatUnpricedPolicy, parseUnpricedPolicy } from '../../domain/pricing/unpriced-policy';
import { resolvePrice } from '../../domain/pricing/cost';
import { DEFAULT_OUTPUT_LIMIT, parseOutputLimit } from '../../domain/pricing/estimate';
import type { OwnerConfigStore, OwnerRouting } from '../../state/owner-config/store';
import type { AlertMail } from '../../state/alerts/alert-mail';
import { MailError } from '../../adapters/mail/mailer';
import type { TestMailRequest, TestMailResult } from '../../../contract/config/schemas';

/** Internal keys kept beside the `/x-config` ones; never listed by `/x-config`. */
export const LOG_ENABLE_KEY = '_LOG_ENABLE';
/**
 * A model without a price that was requested: `_UNPRICED:<model>`, first seen as the value,
 * last seen as updated_at (written by the proxy, see gateway/stages/price-policy.ts).
 */
export const UNPRICED_PREFIX = '_UNPRICED:';
const UNPRICED_SHOWN = 100;

export interface ConfigServiceDeps {
  db: Db;
  vault: Vault;
  store: OwnerConfigStore;
  pool: KeyPool;
  /** Announces a change inside its transaction and applies it to this instance's snapshots after commit. */
  changes: Changes;
  settings: Pick<Settings, 'userMinBalance' | 'userApiBalance'>;
  /** Flushes buffered usage records; the proxy provides it. */
  flushUsage: () => Promise<number>;
  /** The proxy's key health (circuits) of an Owner's keys; none without a proxy. */
  keyHealth?: (ownerId: number) => readonly KeyHealthReport[];
  /** Sends mail with the Owner's stored settings (the test mail); none: no mail is sent at all. */
  mail?: Pick<AlertMail, 'testMail'>;
}

/** One circuit of a key (or of a model on it) as the proxy reports it (times in ms since epoch). */
export interface KeyHealthReport {
  keyId: number;
  model: string | null;
  state: 'healthy' | 'failing' | 'open' | 'half-open';
  since: number;
  until: number | null;
  failures: number;
  lastError: string | null;
  lastErrorAt: number | null;
}

const iso = (ms: number) => new Date(ms).toISOString();

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
      UnpricedModelPolicy: r.unpricedPolicy.kind === 'bill'
        ? { Policy: 'bill', InputText: r.unpricedPolicy.inputText, OutputText: r.unpricedPolicy.outputText }
        : { Policy: 'refuse', InputText: null, OutputText: null },
      UnpricedModels: await this.unpricedModels(caller.ownerId, r.pricing),
      KeyHealth: this.keyHealth(caller.ownerId, keys, now),
      DefaultOutputLimit: r.defaultOutputLimit,
      UserMinBalance: this.d.settings.userMinBalance,
      UserApiBalance: this.d.settings.userApiBalance,
    };
  }

  /** Requested models that still have no price, latest first. */
  private async unpricedModels(ownerId: number, pricing: OwnerRouting['pricing']): Promise<ConfView['UnpricedModels']> {
    const rows = await this.d.db.select().from(ownerConfigs)
      .where(and(eq(ownerConfigs.ownerId, ownerId), like(ownerConfigs.key, `\\${UNPRICED_PREFIX}%`)))
      .orderBy(desc(ownerConfigs.updatedAt));
    const out: ConfView['UnpricedModels'] = [];
    for (const row of rows) {
      const model = row.key.slice(UNPRICED_PREFIX.length);
      // Priced since (PRICING or a newer default table): no longer the Owner's concern.
      if (resolvePrice(model, pricing).known) continue;
      const first = Date.parse(row.value);
      out.push({ Model: model, FirstAt: Number.isNaN(first) ? row.updatedAt.toISOString() : new Date(first).toISOString(), LastAt: row.updatedAt.toISOString() });
      if (out.length === UNPRICED_SHOWN) break;
    }
    return out;
  }

  /** The proxy's circuits of the Owner's enabled keys, named as the database names them. */
  private keyHealth(ownerId: number, keys: (typeof providerKeys.$inferSelect)[], now: number): ConfView['KeyHealth'] {
    const byId = new Map(keys.filter((k) => k.status).map((k) => [k.id, k]));
    return (this.d.keyHealth?.(ownerId) ?? []).flatMap((h) => {
      const k = byId.get(h.keyId);
      if (!k) return [];
      return [{
        ID: k.id, Name: k.name, Level: k.level, Model: h.model, State: h.state, Since: iso(h.since),
        Until: h.until !== null && h.until > now ? iso(h.until) : null,
        Failures: h.failures, LastError: h.lastError, LastErrorAt: h.lastErrorAt === null ? null : iso(h.lastErrorAt),
      }];
    });
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
    if (input.Resources !== undefined) asBadRequest(() => parseResourcePaths(input.Resources!, 'Resources'));
    const unpriced = input.UnpricedModelPolicy !== undefined ? asBadRequest(() => parseUnpricedPolicy(input.UnpricedModelPolicy!, 'UnpricedModelPolicy')) : undefined;
    // Refuse is the default: stored only when it differs.
    if (unpriced) changes.UNPRICED_MODEL_POLICY = unpriced.kind === 'refuse' ? null : formatUnpricedPolicy(unpriced);
    if (input.DefaultOutputLimit !== undefined) {
      const limit = asBadRequest(() => parseOutputLimit(input.DefaultOutputLimit!, 'DefaultOutputLimit'));
      changes.DEFAULT_OUTPUT_LIMIT = limit === DEFAULT_OUTPUT_LIMIT ? null : String(limit);
    }
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
    const changed: Change[] = [{ k: 'owner-config', owner: ownerId }];
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
      if (cascaded) changed.push({ k: 'accounts' });
      // LoadKeys reloads the key pool of every instance, not only this one's.
      if (input.LoadKeys || input.DelKeys) changed.push({ k: 'provider-keys', owner: ownerId });
      await this.d.changes.announce(tx, changed);
    });
    await this.d.changes.apply(changed);
    const reloadedKeys = input.LoadKeys ? this.d.pool.size(ownerId) : undefined;
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
      await this.d.changes.announce(tx, [{ k: 'owner-config', owner: actor.caller.ownerId }]);
    });
    await this.d.changes.apply([{ k: 'owner-config', owner: actor.caller.ownerId }]);
    return { success: true as const, oid: actor.caller.ownerId, updated, removed };
  }

  async remove(actor: Actor, keys: ConfigKey[]) {
    const unique = [...new Set(keys)];
    await this.d.db.transaction(async (tx) => {
      await this.d.store.write(tx, actor.caller.ownerId, Object.fromEntries(unique.map((k) => [k, null])));
      await recordOperation(tx, actor, { action: 'delete_config', targetId: actor.caller.ownerId, details: { deleted: unique } });
      await this.d.changes.announce(tx, [{ k: 'owner-config', owner: actor.caller.ownerId }]);
    });
    await this.d.changes.apply([{ k: 'owner-config', owner: actor.caller.ownerId }]);
    return { success: true as const, oid: actor.caller.ownerId, deleted: unique };
  }

  async testMail(actor: Actor, input: TestMailRequest): Promise<TestMailResult> {
    try {
      const sent = await this.d.mail?.testMail(actor.caller.ownerId, input.To);
      if (!sent) throw badRequest(MAIL_NOT_CONFIGURED, 'mail_not_configured');
      return { success: true as const, ...sent };
    } catch (err) {
      // The mail error's text names the setting to check, never the server, login or password.
      if (err instanceof MailError) throw badRequest(err.message, err.code);
      throw err;
    }
  }
}

export const MAIL_NOT_CONFIGURED = 'Mail is not configured: set EMAIL_SMTP (and EMAIL_PORT, EMAIL_AUTH, EMAIL_PASS as the server needs) first';

function safeParse<T>(fn: () => T[]): T[] {
  try { return fn(); } catch { return []; }
}
