/**
 * Stage 6, dispatch: serves an admitted call upstream — the mapped model, then its
 * MODEL_FAILOVER chain; per model the Levels of the plan (SWITCH_OVER); per Level its keys
 * whose circuits let them through (dispatch/level-keys), while FAILOVER_BUDGET_MS lasts; the
 * answer is relayed to the client as it comes. Only failures before the first byte move on.
 * When nothing was delivered it refuses with the tally's error (429 upstream_rate_limited,
 * 504 upstream_timeout, 502 upstream_error, 503 upstream_unavailable / no_available_key /
 * no_provider_key, 400 unsupported_by_provider), naming the request ID, and logs every cause
 * under that ID at `warn`. A body its translation finds malformed is refused at once with 400
 * invalid_request (formats/shape.ts). A Responses call continuing a stored response goes to the
 * key that created it alone (400 previous_response_unavailable when that key is gone).
 */
import type { ProxyCall, ProxySettings } from '../call';
import { refuse } from '../errors';
import type { Delivered } from '../dispatch/attempt';
import { levelPlan } from '../dispatch/levels';
import { tryLevel, type LevelDeps } from '../dispatch/level-keys';
import { finalError, Tally } from '../dispatch/tally';
import type { SwitchOver } from '../key-health/switch-over';
import { mayServeModel } from './price-policy';
import type { KeyPool, PooledKey } from '../../state/provider-keys/key-pool';
import type { ResponseKeys } from '../../state/response-keys/response-keys';

export interface DispatchDeps extends LevelDeps {
  settings: LevelDeps['settings'] & Pick<ProxySettings, 'failoverBudgetMs'>;
  switchOver: Pick<SwitchOver, 'noteAbnormal' | 'isSwitched'>;
  pool: LevelDeps['pool'] & Pick<KeyPool, 'levelsOf'>;
  responseKeys?: Pick<ResponseKeys, 'remember' | 'keyOf'>;
}

/**
 * A Responses call continuing a stored response (`previous_response_id`) belongs on the key
 * that created it: that key (undefined when no key is known for it, the call is routed as any
 * other), or null when that key is no longer enabled.
 */
async function pinnedKey(d: DispatchDeps, c: ProxyCall): Promise<PooledKey | null | undefined> {
  const previous = c.doc.previous_response_id;
  if (typeof previous !== 'string' || !d.responseKeys) return undefined;
  const keyId = await d.responseKeys.keyOf(c.row.ownerId, previous);
  if (keyId === null) return undefined;
  return enabledKey(d.pool, c.row.ownerId, keyId);
}

/** The Owner's key `keyId` when it is enabled (on any Level), else null. */
export function enabledKey(pool: Pick<KeyPool, 'levelsOf' | 'keys'>, ownerId: number, keyId: number): PooledKey | null {
  for (const level of pool.levelsOf(ownerId)) {
    for (const k of pool.keys(ownerId, level)) if (k.id === keyId) return k;
  }
  return null;
}

/** The Level's keys narrowed to one: the attempt loop then tries that key alone (unless it sleeps). */
function onlyKey(d: DispatchDeps, key: PooledKey): DispatchDeps {
  const pool: DispatchDeps['pool'] = {
    pick: (_owner, _level, exclude, now) => (exclude?.has(key.id) || d.pool.sleepingUntil(key.id, now) !== null ? undefined : key),
    keys: () => [key],
    sleepingUntil: (id, now) => d.pool.sleepingUntil(id, now),
    levelsOf: () => [key.level],
  };
  return { ...d, pool };
}

/** The delivered answer, for settle; null when the client left or was sent the final error. */
export async function dispatch(d: DispatchDeps, c: ProxyCall): Promise<Delivered | null> {
  const tally = new Tally();
  tally.deadline = Date.now() + d.settings.failoverBudgetMs;
  const { owner, profile } = c;
  const pin = c.endpoint === 'responses' ? await pinnedKey(d, c) : undefined;
  if (pin === null) {
    refuse(c, { status: 400, message: `The provider key that created response ${String(c.doc.previous_response_id)} is no longer enabled; start a new conversation without previous_response_id (request ${c.id})`, code: 'previous_response_unavailable' });
    return null;
  }
  // No failover for a pinned call: another key or model does not know the response.
  const chain = !pin && owner.failover.size ? owner.failover.match(c.model) : undefined;
  // A fallback without a price is tried only where the price policy would serve it.
  const models = chain
    ? [c.model, ...chain.filter((m) => m !== c.model && profile.models.allows(m) && mayServeModel(m, owner.pricing, owner.unpricedPolicy, profile.exempt, c.route.meter))]
    : [c.model];
  for (let i = 0; i < models.length; i++) {
    const model = models[i];
    // A fallback model starts on its own Level.
    const start = i === 0 ? c.level : profile.levelMapper.match(model) ?? owner.levelMapper.match(model) ?? c.row.level;
    for (const level of pin ? [pin.level] : levelPlan(start, owner.switchOver, c.row.ownerId, d.switchOver, profile.levels, Date.now())) {
      tally.lastLevel = level;
      const outcome = await tryLevel(pin ? onlyKey(d, pin) : d, c, model, level, tally);
      if (outcome) return outcome.kind === 'delivered' ? outcome : null;
      if (c.ex.aborted || tally.budgetSpent || tally.final) break;
    }
    if (c.ex.aborted || tally.budgetSpent || tally.final) break;
  }
  if (c.ex.aborted) return null;
  if (tally.malformed) {
    refuse(c, tally.malformed);
    return null;
  }
  const r = finalError(c, tally);
  // Upstream failures are the Owner's to know about; a Level without keys (or none able to serve) is configuration.
  const failed = tally.attempts > 0 || tally.openUntil !== undefined;
  d.log[failed ? 'warn' : 'info']('upstream_failed', {
    request: c.id, owner: c.row.ownerId, account: c.row.id, model: c.model, status: r.status, code: r.code,
    attempts: tally.attempts, ...(tally.budgetSpent ? { budget_spent: true } : {}), causes: tally.causes,
  });
  refuse(c, r);
  return null;
}
