import { and, eq } from 'drizzle-orm';
import type { Db } from '../../adapters/storage/database';
import { providerKeys } from '../../adapters/storage/schema';
import { PURPOSE, type Vault } from '../../adapters/security/crypto';

export interface PooledKey {
  id: number;
  ownerId: number;
  name: string;
  level: number;
  provider: string;
  /** Decrypted once per reload: the hot path never touches the database or the cipher. */
  secret: string;
  config: Record<string, unknown>;
  /** Decrypted private key of a cloud-platform key (a Bedrock key's session token). */
  privateKey?: string;
}

/** A key's kind as usage records it (its provider_type); a key stored before kinds existed is standard. */
export const keyKindOf = (key: Pick<PooledKey, 'config'>): string => {
  const type = key.config?.provider_type;
  return typeof type === 'string' && type ? type : 'standard';
};

/**
 * The routing snapshot of enabled provider keys, per Owner and Level, with round-robin
 * cursors and the sleeping state. Reloaded from the database on every key change.
 */
export class KeyPool {
  private levels = new Map<number, Map<number, PooledKey[]>>();
  private cursors = new Map<string, number>();
  private sleepUntil = new Map<number, number>();
  private wakeListeners: ((keyId: number) => void)[] = [];
  /** Reloads started, and per Owner the latest one whose result is held. */
  private reloads = 0;
  private landed = new Map<number, number>();

  constructor(private readonly db: Db, private readonly vault: Vault) {}

  async reload(ownerId: number): Promise<number> {
    const started = ++this.reloads;
    const rows = await this.db.select().from(providerKeys)
      .where(and(eq(providerKeys.ownerId, ownerId), eq(providerKeys.status, true)));
    // Two reloads of one Owner can overlap (an admin call here, a change from another
    // instance): the one that read later wins, whichever finishes last.
    if ((this.landed.get(ownerId) ?? 0) > started) return rows.length;
    this.landed.set(ownerId, started);
    const byLevel = new Map<number, PooledKey[]>();
    for (const r of rows.sort((a, b) => a.id - b.id)) {
      const secret = this.vault.decrypt(PURPOSE.providerSecret, r.secretCipher);
      if (secret === null) continue;
      const privateKey = r.configSecretCipher ? this.vault.decrypt(PURPOSE.providerSecret, r.configSecretCipher) ?? undefined : undefined;
      const key: PooledKey = { id: r.id, ownerId, name: r.name, level: r.level, provider: r.provider, secret, config: r.config, privateKey };
      let list = byLevel.get(r.level);
      if (!list) byLevel.set(r.level, (list = []));
      list.push(key);
    }
    this.levels.set(ownerId, byLevel);
    return rows.length;
  }

  async reloadAll(ownerIds: Iterable<number>): Promise<void> {
    for (const id of ownerIds) await this.reload(id);
  }

  /** Keys of the Owner held for routing, every Level. */
  size(ownerId: number): number {
    let n = 0;
    for (const list of this.levels.get(ownerId)?.values() ?? []) n += list.length;
    return n;
  }

  /** Owners whose keys are held (loaded at least once). */
  owners(): number[] {
    return [...this.levels.keys()];
  }

  keys(ownerId: number, level: number): readonly PooledKey[] {
    return this.levels.get(ownerId)?.get(level) ?? [];
  }

  levelsOf(ownerId: number): number[] {
    return [...(this.levels.get(ownerId)?.keys() ?? [])].sort((a, b) => a - b);
  }

  /** Next awake key of the Level in round-robin order, skipping `exclude`. */
  pick(ownerId: number, level: number, exclude?: ReadonlySet<number>, now = Date.now()): PooledKey | undefined {
    const list = this.keys(ownerId, level);
    if (list.length === 0) return undefined;
    const cursorKey = `${ownerId}:${level}`;
    const start = this.cursors.get(cursorKey) ?? 0;
    for (let i = 0; i < list.length; i++) {
      const idx = (start + i) % list.length;
      const k = list[idx];
      if (exclude?.has(k.id) || this.isSleeping(k.id, now)) continue;
      this.cursors.set(cursorKey, idx + 1);
      return k;
    }
    return undefined;
  }

  sleep(keyId: number, ms: number, now = Date.now()): void {
    this.sleepUntil.set(keyId, Math.max(this.sleepUntil.get(keyId) ?? 0, now + ms));
  }

  wake(keyId: number): void {
    if (this.sleepUntil.delete(keyId)) for (const l of this.wakeListeners) l(keyId);
  }

  /** Hears a sleeping key woken (re-enabled or given a new secret), so shared key health forgets its sleep too. */
  onWake(listener: (keyId: number) => void): void {
    this.wakeListeners.push(listener);
  }

  isSleeping(keyId: number, now = Date.now()): boolean {
    const until = this.sleepUntil.get(keyId);
    if (until === undefined) return false;
    if (until <= now) {
      this.sleepUntil.delete(keyId);
      return false;
    }
    return true;
  }

  sleepingUntil(keyId: number, now = Date.now()): number | null {
    return this.isSleeping(keyId, now) ? this.sleepUntil.get(keyId)! : null;
  }
}
