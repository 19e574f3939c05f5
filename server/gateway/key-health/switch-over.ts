import { LOCAL_BOARD, type HealthBoard, type HealthMark, type SwitchOverRule } from './board';
import type { KeyHealthEvents } from './events';

export type { SwitchOverRule } from './board';

/**
 * SWITCH_OVER windows per Owner's Level. Both calls are synchronous and answer from memory:
 * the dispatch plan asks `isSwitched` on every call that has a backup Level.
 */
export interface SwitchOver {
  /** Records one abnormal upstream result (5xx, connection error, cut stream) of an Owner's Level. */
  noteAbnormal(ownerId: number, level: number, now: number): void;
  /**
   * Whether the Level is switched over: more than the threshold of abnormal results fell
   * within one window, and its last window is not clean yet (the latest abnormal result is
   * less than a window old).
   */
  isSwitched(ownerId: number, level: number, now: number): boolean;
}

interface AbnormalWindow {
  /** Times of the latest abnormal results, oldest first; at most threshold + 1 are kept. */
  times: number[];
  tripped: boolean;
}

const SWEEP_EVERY_MS = 10 * 60_000;

const scopeOf = (ownerId: number, level: number) => `${ownerId}:${level}`;

/**
 * The switch-over windows of this instance, joined with those the board hears from the others:
 * a Level is switched over when this instance's own count says so, or when another instance
 * (or the count shared through the board) announced it and that switch has not ended yet.
 * Abnormal results are counted here and on the board, so with Redis away the instance still
 * switches on its own results.
 */
export class SwitchOverWindows implements SwitchOver {
  private local = new Map<string, AbnormalWindow>();
  /** Switches heard from the board: until when (ms since epoch, this instance's clock). */
  private heard = new Map<string, number>();
  private lastSweep = Date.now();

  constructor(private readonly rule: SwitchOverRule, private readonly board: HealthBoard = LOCAL_BOARD, private readonly events?: KeyHealthEvents) {
    board.onMark((m) => this.hear(m));
  }

  noteAbnormal(ownerId: number, level: number, now: number): void {
    const scope = scopeOf(ownerId, level);
    let w = this.local.get(scope);
    if (!w) this.local.set(scope, (w = { times: [], tripped: false }));
    const last = w.times[w.times.length - 1];
    // The window went clean since the last result: whatever tripped before is over.
    if (last !== undefined && now - last >= this.rule.windowMs) w.tripped = false;
    const wasTripped = w.tripped;
    w.times.push(now);
    while (w.times.length > 0 && now - w.times[0] >= this.rule.windowMs) w.times.shift();
    if (w.times.length > this.rule.threshold + 1) w.times.shift();
    if (w.times.length > this.rule.threshold) w.tripped = true;
    if (w.tripped && !wasTripped) this.events?.emit({ type: 'level_switched', ownerId, level, at: now });
    this.board.countAbnormal(ownerId, level, this.rule);
    this.maybeSweep(now);
  }

  isSwitched(ownerId: number, level: number, now: number): boolean {
    const scope = scopeOf(ownerId, level);
    const w = this.local.get(scope);
    if (w?.tripped) {
      if (now - w.times[w.times.length - 1] < this.rule.windowMs) return true;
      // The Level's last window is clean again: traffic returns to it.
      this.local.delete(scope);
    }
    const until = this.heard.get(scope);
    if (until === undefined) return false;
    if (until > now) return true;
    this.heard.delete(scope);
    return false;
  }

  private hear(m: HealthMark): void {
    if (m.scope !== 'level' || m.state !== 'switched') return;
    const scope = scopeOf(m.ownerId, m.id);
    if (m.ms <= 0) {
      this.heard.delete(scope);
      return;
    }
    const now = Date.now();
    const until = now + m.ms;
    const before = this.heard.get(scope) ?? 0;
    this.heard.set(scope, Math.max(before, until));
    // Switched by the shared count (or another instance): told once per switch heard anew.
    if (before <= now && !this.local.get(scope)?.tripped) this.events?.emit({ type: 'level_switched', ownerId: m.ownerId, level: m.id, at: now });
  }

  /** Drops windows that went clean, so Levels that failed once do not hold memory forever. */
  private maybeSweep(now: number): void {
    if (now - this.lastSweep < SWEEP_EVERY_MS) return;
    this.lastSweep = now;
    for (const [scope, w] of this.local) {
      const last = w.times[w.times.length - 1];
      if (last === undefined || now - last >= this.rule.windowMs) this.local.delete(scope);
    }
    for (const [scope, until] of this.heard) if (until <= now) this.heard.delete(scope);
  }
}
