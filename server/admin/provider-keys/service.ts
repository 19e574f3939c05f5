import { and, asc, count, eq, type SQL } from 'drizzle-orm';
import type { Actor } from '../../../contract/services';
import type { ProviderKeyService } from '../../../contract/keys/service';
import type { ProviderConfigInput, ProviderConfigPatch, ProviderKeyCreate, ProviderKeyListQuery, ProviderKeyPatch, ProviderKeyResult } from '../../../contract/keys/schemas';
import type { Page } from '../../../contract/trpc';
import { badRequest, notFound } from '../../../contract/errors';
import { MAX_ID } from '../../../contract/common';
import type { Db } from '../../adapters/storage/database';
import { ownerConfigs, providerKeys } from '../../adapters/storage/schema';
import { PURPOSE, hint, type Vault } from '../../adapters/security/crypto';
import { recordOperation } from '../../state/oplog/oplog';
import type { KeyPool } from '../../state/provider-keys/key-pool';
import type { OwnerConfigStore } from '../../state/owner-config/store';
import type { Change } from '../../state/changes/change';
import type { Changes } from '../../state/changes/state-changes';
import { formatEntries, parseLevelMapper } from '../../domain/mapping/mappers';
import { modelFamilyOf, normalizeProvider, toProviderKey, type ProviderKeyRow } from './view';
import { pageOf } from '../../adapters/storage/paging';

export class ProviderKeys implements ProviderKeyService {
  constructor(
    private readonly db: Db,
    private readonly vault: Vault,
    private readonly pool: KeyPool,
    private readonly config: OwnerConfigStore,
    private readonly changes: Changes,
  ) {}

  private view = (row: ProviderKeyRow) => toProviderKey(row, this.pool.sleepingUntil(row.id));

  private async page(ownerId: number, where: SQL[], paging: { page?: number; size?: number }): Promise<Page<ReturnType<ProviderKeys['view']>>> {
    const { page, size, offset } = pageOf(paging);
    const cond = and(eq(providerKeys.ownerId, ownerId), ...where);
    const [{ n }] = await this.db.select({ n: count() }).from(providerKeys).where(cond);
    const rows = await this.db.select().from(providerKeys).where(cond).orderBy(asc(providerKeys.id)).limit(size).offset(offset);
    return { items: rows.map(this.view), total: n, page, size };
  }

  list({ caller }: Actor, q: ProviderKeyListQuery) {
    const where: SQL[] = [];
    if (q.id !== undefined) where.push(eq(providerKeys.id, q.id));
    if (q.level !== undefined) where.push(eq(providerKeys.level, q.level));
    if (q.provider) where.push(eq(providerKeys.providerHost, hostOf(q.provider)));
    return this.page(caller.ownerId, where, q);
  }

  async select({ caller }: Actor, selector: string, paging: { page?: number; size?: number }) {
    if (/^\d+$/.test(selector)) {
      const id = Number(selector);
      if (!storedId(id)) throw notFound(`Provider key ${selector} not found`);
      const result = await this.page(caller.ownerId, [eq(providerKeys.id, id)], paging);
      if (result.total === 0) throw notFound(`Provider key ${selector} not found`);
      return result;
    }
    const level = /^L(\d{1,4})$/i.exec(selector);
    if (level) return this.page(caller.ownerId, [eq(providerKeys.level, Number(level[1]))], paging);
    if (!/^[A-Za-z0-9.-]+(:\d+)?$/.test(selector)) throw badRequest('selector must be a key ID, L{n} or a provider host');
    return this.page(caller.ownerId, [eq(providerKeys.providerHost, selector.toLowerCase())], paging);
  }

  async create(actor: Actor, input: ProviderKeyCreate): Promise<ProviderKeyResult> {
    const ownerId = actor.caller.ownerId;
    const { provider, host } = normalizeProvider(input.Provider);
    const { config, privateKey } = splitConfig(input.config ?? { provider_type: 'standard' });
    const level = input.Level ?? 1;
    let added: string | null = null;
    const changed: Change[] = [{ k: 'provider-keys', owner: ownerId }];
    const row = await this.db.transaction(async (tx) => {
      const [row] = await tx.insert(providerKeys).values({
        ownerId,
        name: input.Name ?? '',
        level,
        provider,
        providerHost: host,
        secretCipher: this.vault.encrypt(PURPOSE.providerSecret, input.SecretKey),
        secretHint: hint(input.SecretKey),
        status: input.Status ?? false,
        config,
        configSecretCipher: privateKey ? this.vault.encrypt(PURPOSE.providerSecret, privateKey) : null,
      }).returning();
      if (config.provider_type === 'standard' || config.provider_type === 'anthropic') added = await this.completeLevelMapper(tx, ownerId, host, level);
      await recordOperation(tx, actor, {
        action: 'add_key',
        targetId: ownerId,
        details: { key: row.id, name: row.name, level, provider, status: row.status, provider_type: config.provider_type, level_mapper_added: added },
      });
      if (added) changed.push({ k: 'owner-config', owner: ownerId });
      await this.changes.announce(tx, changed);
      return row;
    });
    await this.changes.apply(changed);
    return { Action: 'add', Key: this.view(row), LevelMapper: added };
  }

  /** Adds `<family>=<level>` to LEVEL_MAPPER when the provider's model family has no entry yet. */
  private async completeLevelMapper(tx: Parameters<Parameters<Db['transaction']>[0]>[0], ownerId: number, host: string, level: number): Promise<string | null> {
    const family = modelFamilyOf(host);
    if (!family) return null;
    // Read inside the transaction (PGlite has one connection; a read through `db` would wait
    // on this very transaction), and lock the row so two concurrent creates cannot both append.
    const [row] = await tx.select({ value: ownerConfigs.value }).from(ownerConfigs)
      .where(and(eq(ownerConfigs.ownerId, ownerId), eq(ownerConfigs.key, 'LEVEL_MAPPER'))).for('update');
    const current = row?.value ?? '';
    let entries;
    try { entries = parseLevelMapper(current); } catch { return null; }
    if (entries.some((e) => e.pattern === family)) return null;
    const entry = `${family}=${level}`;
    await this.config.write(tx, ownerId, { LEVEL_MAPPER: formatEntries([...entries, { pattern: family, value: level }]) });
    return entry;
  }

  async update(actor: Actor, id: number, patch: ProviderKeyPatch): Promise<ProviderKeyResult> {
    if (Object.keys(patch).length === 0) throw badRequest('Nothing to update: send at least one of Name, Level, Provider, SecretKey, Status, config');
    const ownerId = actor.caller.ownerId;
    if (!storedId(id)) throw notFound(`Provider key ${id} not found`);
    // Re-enabled by hand or given a new secret: a key sleeping after a 429 wakes on every instance.
    const wake = patch.Status === true || patch.SecretKey !== undefined;
    const keysChanged: Change[] = [{ k: 'provider-keys', owner: ownerId, ...(wake ? { wake: id } : {}) }];
    const row = await this.db.transaction(async (tx) => {
      const [current] = await tx.select().from(providerKeys).where(and(eq(providerKeys.id, id), eq(providerKeys.ownerId, ownerId))).for('update');
      if (!current) throw notFound(`Provider key ${id} not found`);
      const set: Partial<typeof providerKeys.$inferInsert> = { updatedAt: new Date() };
      if (patch.Name !== undefined) set.name = patch.Name;
      if (patch.Level !== undefined) set.level = patch.Level;
      if (patch.Provider !== undefined) Object.assign(set, (({ provider, host }) => ({ provider, providerHost: host }))(normalizeProvider(patch.Provider)));
      if (patch.SecretKey !== undefined) {
        set.secretCipher = this.vault.encrypt(PURPOSE.providerSecret, patch.SecretKey);
        set.secretHint = hint(patch.SecretKey);
      }
      if (patch.Status !== undefined) {
        set.status = patch.Status;
        // Re-enabling by hand clears what the gateway recorded when it disabled the key.
        if (patch.Status) Object.assign(set, { disabledReason: null, disabledAt: null });
      }
      if (patch.config !== undefined) {
        const { config, privateKey } = splitConfig(patch.config);
        set.config = config;
        if (config.provider_type === 'bedrock') {
          // A session token left out of the update is kept (write-only, as a private key).
          if (privateKey) set.configSecretCipher = this.vault.encrypt(PURPOSE.providerSecret, privateKey);
          else if (current.config.provider_type !== 'bedrock') set.configSecretCipher = null;
        } else if (config.provider_type !== 'vertex') set.configSecretCipher = null;
        else if (privateKey) set.configSecretCipher = this.vault.encrypt(PURPOSE.providerSecret, privateKey);
        else if (!current.configSecretCipher || current.config.provider_type !== 'vertex') throw badRequest('config.private_key: required when switching a key to the vertex kind');
      }
      const [row] = await tx.update(providerKeys).set(set).where(eq(providerKeys.id, id)).returning();
      const changed = Object.keys(patch).map((k) => (k === 'SecretKey' ? 'SecretKey(changed)' : k));
      await recordOperation(tx, actor, { action: 'update_key', targetId: ownerId, details: { key: id, fields: changed, status: row.status, level: row.level } });
      await this.changes.announce(tx, keysChanged);
      return row;
    });
    await this.changes.apply(keysChanged);
    return { Action: 'update', Key: this.view(row), LevelMapper: null };
  }

  async remove(actor: Actor, id: number): Promise<ProviderKeyResult> {
    const ownerId = actor.caller.ownerId;
    if (!storedId(id)) throw notFound(`Provider key ${id} not found`);
    const row = await this.db.transaction(async (tx) => {
      const [row] = await tx.delete(providerKeys).where(and(eq(providerKeys.id, id), eq(providerKeys.ownerId, ownerId))).returning();
      if (!row) throw notFound(`Provider key ${id} not found`);
      await recordOperation(tx, actor, { action: 'delete_key', targetId: ownerId, details: { key: id, name: row.name, level: row.level, provider: row.provider } });
      await this.changes.announce(tx, [{ k: 'provider-keys', owner: ownerId }]);
      return row;
    });
    await this.changes.apply([{ k: 'provider-keys', owner: ownerId }]);
    return { Action: 'delete', Key: this.view(row), LevelMapper: null };
  }
}

function hostOf(provider: string): string {
  if (provider.includes('://')) {
    try { return new URL(provider).host.toLowerCase(); } catch { throw badRequest('provider: not a valid URL or host'); }
  }
  return provider.toLowerCase();
}

/** Keeps the private key (a Bedrock key's session token) out of the plain `config` column: it is stored encrypted beside it. */
function splitConfig(input: ProviderConfigInput | ProviderConfigPatch): { config: Record<string, unknown>; privateKey?: string } {
  if (input.provider_type === 'bedrock') {
    const { session_token, ...rest } = input;
    return { config: rest, privateKey: session_token };
  }
  if (input.provider_type === 'vertex') {
    const { private_key, ...rest } = input;
    return { config: rest, privateKey: private_key };
  }
  return { config: { ...input } };
}

/** An ID a key could have: a larger one is no key (the 404 of any unknown ID), not a database error. */
const storedId = (id: number) => Number.isSafeInteger(id) && id >= 1 && id <= MAX_ID;
