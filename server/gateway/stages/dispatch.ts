/**
 * Stage 6, dispatch: serves an admitted call upstream — the mapped model, then its
 * MODEL_FAILOVER chain; per model the Levels of the plan (SWITCH_OVER); per Level its keys
 * (dispatch/level-keys); the answer is relayed to the client as it comes. Only failures before
 * the first byte move on. When nothing was delivered it refuses with the tally's error: 429
 * upstream_rate_limited, 504 upstream_timeout, 502 upstream_error, 503 no_available_key /
 * no_provider_key, 400 unsupported_by_provider.
 */
import type { ProxyCall } from '../call';
import { refuse } from '../errors';
import type { Delivered } from '../dispatch/attempt';
import { levelPlan } from '../dispatch/levels';
import { tryLevel, type LevelDeps } from '../dispatch/level-keys';
import { finalError, Tally } from '../dispatch/tally';
import type { LimitStore } from '../limits/counters';

export interface DispatchDeps extends LevelDeps {
  limits: Pick<LimitStore, 'noteAbnormal' | 'isSwitched'>;
}

/** The delivered answer, for settle; null when the client left or was sent the final error. */
export async function dispatch(d: DispatchDeps, c: ProxyCall): Promise<Delivered | null> {
  const tally = new Tally();
  const { owner, profile } = c;
  const chain = owner.failover.size ? owner.failover.match(c.model) : undefined;
  const models = chain ? [c.model, ...chain.filter((m) => m !== c.model && profile.models.allows(m))] : [c.model];
  for (let i = 0; i < models.length; i++) {
    const model = models[i];
    // A fallback model starts on its own Level.
    const start = i === 0 ? c.level : profile.levelMapper.match(model) ?? owner.levelMapper.match(model) ?? c.row.level;
    for (const level of levelPlan(start, owner.switchOver, c.row.ownerId, d.limits, profile.levels, Date.now())) {
      tally.lastLevel = level;
      const outcome = await tryLevel(d, c, model, level, tally);
      if (outcome) return outcome.kind === 'delivered' ? outcome : null;
      if (c.ex.aborted) return null;
    }
  }
  refuse(c, finalError(c, tally));
  return null;
}
