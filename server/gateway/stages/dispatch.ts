/**
 * Stage 6, dispatch: serves an admitted call upstream — the mapped model, then its
 * MODEL_FAILOVER chain; per model the Levels of the plan (SWITCH_OVER); per Level its keys
 * whose circuits let them through (dispatch/level-keys), while FAILOVER_BUDGET_MS lasts; the
 * answer is relayed to the client as it comes. Only failures before the first byte move on.
 * When nothing was delivered it refuses with the tally's error (429 upstream_rate_limited,
 * 504 upstream_timeout, 502 upstream_error, 503 upstream_unavailable / no_available_key /
 * no_provider_key, 400 unsupported_by_provider), naming the request ID, and logs every cause
 * under that ID at `warn`.
 */
import type { ProxyCall, ProxySettings } from '../call';
import { refuse } from '../errors';
import type { Delivered } from '../dispatch/attempt';
import { levelPlan } from '../dispatch/levels';
import { tryLevel, type LevelDeps } from '../dispatch/level-keys';
import { finalError, Tally } from '../dispatch/tally';
import type { SwitchOver } from '../key-health/switch-over';
import { mayServeModel } from './price-policy';

export interface DispatchDeps extends LevelDeps {
  settings: LevelDeps['settings'] & Pick<ProxySettings, 'failoverBudgetMs'>;
  switchOver: Pick<SwitchOver, 'noteAbnormal' | 'isSwitched'>;
}

/** The delivered answer, for settle; null when the client left or was sent the final error. */
export async function dispatch(d: DispatchDeps, c: ProxyCall): Promise<Delivered | null> {
  const tally = new Tally();
  tally.deadline = Date.now() + d.settings.failoverBudgetMs;
  const { owner, profile } = c;
  const chain = owner.failover.size ? owner.failover.match(c.model) : undefined;
  // A fallback without a price is tried only where the price policy would serve it.
  const models = chain
    ? [c.model, ...chain.filter((m) => m !== c.model && profile.models.allows(m) && mayServeModel(m, owner.pricing, owner.unpricedPolicy, profile.exempt))]
    : [c.model];
  for (let i = 0; i < models.length; i++) {
    const model = models[i];
    // A fallback model starts on its own Level.
    const start = i === 0 ? c.level : profile.levelMapper.match(model) ?? owner.levelMapper.match(model) ?? c.row.level;
    for (const level of levelPlan(start, owner.switchOver, c.row.ownerId, d.switchOver, profile.levels, Date.now())) {
      tally.lastLevel = level;
      const outcome = await tryLevel(d, c, model, level, tally);
      if (outcome) return outcome.kind === 'delivered' ? outcome : null;
      if (c.ex.aborted || tally.budgetSpent) break;
    }
    if (c.ex.aborted || tally.budgetSpent) break;
  }
  if (c.ex.aborted) return null;
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
