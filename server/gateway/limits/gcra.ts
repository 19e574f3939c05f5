/**
 * GCRA (generic cell rate algorithm) for request and token limits: one number per counter, the
 * theoretical arrival time `tat`. A limit of L per window W drains at one unit per T = W / L;
 * a cost n fits when max(tat, now) + n·T − now ≤ W. Unlike clock-aligned windows, a burst at
 * the end of one minute leaves no room at the start of the next: at most L units in any W.
 * The Redis store's Lua script does the same arithmetic.
 */

/** Slack for floating-point arithmetic on milliseconds. */
const EPSILON_MS = 1e-6;

export const emissionMs = (windowMs: number, limit: number) => windowMs / limit;

/** The tat after admitting `cost` units, or NaN when they do not fit. */
export function gcraAdmit(tat: number, now: number, cost: number, windowMs: number, limit: number): number {
  const next = Math.max(tat, now) + cost * emissionMs(windowMs, limit);
  return next - now <= windowMs + EPSILON_MS ? next : NaN;
}

/** Units in use at `now` (0…limit). */
export function gcraUsed(tat: number, now: number, windowMs: number, limit: number): number {
  if (tat <= now) return 0;
  return Math.min(limit, Math.ceil((tat - now) / emissionMs(windowMs, limit) - 1e-9));
}

/** When `cost` units would fit (ms). */
export function gcraRetryAt(tat: number, now: number, cost: number, windowMs: number, limit: number): number {
  return Math.max(now, Math.max(tat, now) + cost * emissionMs(windowMs, limit) - windowMs);
}
