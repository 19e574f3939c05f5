import type { SwitchOver } from '../key-health/switch-over';
import type { AllowList } from '../../domain/access/allow-lists';

/**
 * The Levels a model is tried on, in order. The start Level is followed by its SWITCH_OVER
 * backup, the backup's backup and so on (cycles stop at the first repeat): when every key of
 * a Level failed, the request drifts to the next. A Level that is switched over (more than
 * the threshold of abnormal results within the window, last window not clean yet) moves to
 * the end, so its traffic goes to the backup; it is still tried as the last resort.
 * Levels outside the account's AllowLevels are left out.
 */
export function levelPlan(
  start: number,
  switchOver: ReadonlyMap<number, number>,
  ownerId: number,
  windows: Pick<SwitchOver, 'isSwitched'>,
  allowed: AllowList<number>,
  now: number,
): number[] {
  if (switchOver.size === 0) return allowed.allows(start) ? [start] : [];
  const chain = [start];
  for (let cur = switchOver.get(start); cur !== undefined && !chain.includes(cur); cur = switchOver.get(cur)) chain.push(cur);
  const healthy: number[] = [];
  const switched: number[] = [];
  for (const level of chain) {
    if (!allowed.allows(level)) continue;
    // Only a Level with a backup can be switched over.
    if (switchOver.has(level) && windows.isSwitched(ownerId, level, now)) switched.push(level);
    else healthy.push(level);
  }
  return healthy.concat(switched);
}
