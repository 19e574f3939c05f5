/**
 * Rate-limit counters and switch-over windows, behind one small interface so a shared store
 * (REDIS_URL) can replace the in-process one. Calls are synchronous because the proxy's hot
 * path must never wait: a shared implementation keeps a local view and syncs it in the
 * background, accepting that instances may briefly disagree.
 */
export type WindowUnit = 'minute' | 'hour' | 'day';

export const WINDOW_MS: Record<WindowUnit, number> = { minute: 60_000, hour: 3_600_000, day: 86_400_000 };

/** One limit to check at admission: a request counter or a token budget in a window. */
export interface LimitCheck {
  /** Counter identity, e.g. `a:42:rpm` or `m:42:gpt-4o:tpm`. */
  key: string;
  /** What the client is told: `RPM`, `TPD`, `gpt-4o rpm`, ... */
  name: string;
  kind: 'requests' | 'tokens';
  window: WindowUnit;
  limit: number;
}

/** The first limit a request ran into, with what the 429 tells the client. */
export interface LimitRefusal {
  check: LimitCheck;
  used: number;
  /** When the window ends (ms since epoch): then the counter starts again. */
  resetAt: number;
}

export interface LimitStore {
  /**
   * Admits one request: every request counter must have room for one more and every token
   * budget must not be spent yet. On success the request counters are incremented; on refusal
   * nothing is counted.
   */
  admit(checks: readonly LimitCheck[], now: number): LimitRefusal | null;
  /** Adds tokens a finished request used to its token budgets. */
  addTokens(checks: readonly LimitCheck[], tokens: number, now: number): void;
  /** How much of a window is used (for headers and tests). */
  used(check: LimitCheck, now: number): number;
  /** Records one abnormal upstream result for a switch-over scope (an Owner's Level). */
  noteAbnormal(scope: string, now: number): void;
  /**
   * Whether the scope is switched over: more than the threshold of abnormal results fell
   * within one window, and the last one is less than a window old (its last window is not
   * clean yet).
   */
  isSwitched(scope: string, now: number): boolean;
}

export interface SwitchOverRule {
  /** Switch when MORE than this many abnormal results fall within one window. */
  threshold: number;
  windowMs: number;
}

/**
 * Fixed windows aligned to the clock: minutes and hours on epoch boundaries, days on UTC
 * midnight, so RPD/TPD are UTC-day quotas that reset at 00:00 UTC.
 */
export function windowStart(unit: WindowUnit, now: number): number {
  const size = WINDOW_MS[unit];
  return now - (now % size);
}
