/**
 * Which provider key receives an upload. A batch input goes where a call to its model would:
 * the model's Level (LevelMapper, else the account's), then its SWITCH_OVER backups, each
 * Level's keys in round-robin order, passing over sleeping keys, those of a kind without
 * OpenAI's Files API (files/target.ts) and those that do not serve the lines' endpoint. Any
 * other file (`user_data`, `assistants`, `vision`) names no model: it goes to the account's
 * own Level the same way. The key that receives a file keeps it: nothing is moved later.
 */
import type { ProxyCall } from '../call';
import type { Endpoint } from '../providers/types';
import type { ProviderKinds } from '../providers/registry';
import type { KeyPool, PooledKey } from '../../state/provider-keys/key-pool';
import type { SwitchOver } from '../key-health/switch-over';
import { levelPlan } from '../dispatch/levels';
import { filesTarget, type FilesTarget } from './target';

export interface PlacementDeps {
  pool: Pick<KeyPool, 'pick'>;
  kinds: Pick<ProviderKinds, 'of'>;
  switchOver: Pick<SwitchOver, 'isSwitched'>;
}

/** The key for the upload and its Files API; null when no Level of the plan has one. */
export function placeFile(d: PlacementDeps, c: ProxyCall, lines: { model: string; endpoint: Endpoint } | null): { key: PooledKey; target: FilesTarget } | null {
  const ownerId = c.row.ownerId;
  for (const level of levelPlan(c.level, c.owner.switchOver, ownerId, d.switchOver, c.profile.levels, Date.now())) {
    const passed = new Set<number>();
    for (let key = d.pool.pick(ownerId, level); key; key = d.pool.pick(ownerId, level, passed)) {
      passed.add(key.id);
      const target = filesTarget(d.kinds, key);
      if (!target) continue;
      if (lines && !d.kinds.of(key).serves(key, lines.model).has(lines.endpoint)) continue;
      return { key, target };
    }
  }
  return null;
}
