import type { SharedMark } from '../../adapters/redis/health-marks';

/**
 * A timed health mark: a provider key out of rotation (`sleeping` after a 429), an Owner's
 * Level switched over (`switched`). Key health's later states travel the same way.
 */
export type HealthMark = SharedMark;

/** SWITCH_OVER_THRESHOLD / SWITCH_OVER_WINDOW_MS. */
export interface SwitchOverRule {
  /** Switch when MORE than this many abnormal results fall within one window. */
  threshold: number;
  windowMs: number;
}

/**
 * Where instances share key health and switch-over. Nothing here ever makes the proxy wait:
 * each instance keeps its own view (the key pool's sleeping keys, the switch-over windows),
 * tells the board what it changed, and hears through `onMark` what the others changed.
 */
export interface HealthBoard {
  /** Whether marks reach the other instances now (false: Redis away, or none configured). */
  readonly shared: boolean;
  /** Tells the other instances about a mark this instance applied itself. */
  announce(mark: HealthMark): void;
  /**
   * Counts one abnormal result of an Owner's Level across instances; when the shared count
   * switches the Level over, every instance hears a `switched` mark (this one too).
   */
  countAbnormal(ownerId: number, level: number, rule: SwitchOverRule): void;
  /** Marks from the other instances, and those read from the shared store at start and after an outage. */
  onMark(listener: (mark: HealthMark) => void): () => void;
}

/** One instance on its own (no REDIS_URL): nothing to tell, nothing to hear. */
export const LOCAL_BOARD: HealthBoard = {
  shared: false,
  announce() {},
  countAbnormal() {},
  onMark: () => () => {},
};
