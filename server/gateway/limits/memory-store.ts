import { WINDOW_MS, windowStart, type LimitCheck, type LimitRefusal, type LimitStore, type SwitchOverRule } from './counters';

interface Counter {
  start: number;
  count: number;
}

interface AbnormalWindow {
  /** Times of the latest abnormal results, oldest first; at most threshold + 1 are kept. */
  times: number[];
  tripped: boolean;
}

const SWEEP_EVERY_MS = 10 * 60_000;

/** The in-process LimitStore: counters of this instance only. */
export class MemoryLimitStore implements LimitStore {
  private counters = new Map<string, Counter>();
  private abnormal = new Map<string, AbnormalWindow>();
  private lastSweep = Date.now();

  constructor(private readonly rule: SwitchOverRule) {}

  private current(key: string, start: number): Counter | undefined {
    const c = this.counters.get(key);
    return c && c.start === start ? c : undefined;
  }

  admit(checks: readonly LimitCheck[], now: number): LimitRefusal | null {
    if (checks.length === 0) return null;
    for (const check of checks) {
      const start = windowStart(check.window, now);
      const used = this.current(check.key, start)?.count ?? 0;
      const full = check.kind === 'requests' ? used + 1 > check.limit : used >= check.limit;
      if (full) return { check, used, resetAt: start + WINDOW_MS[check.window] };
    }
    for (const check of checks) if (check.kind === 'requests') this.add(check, 1, now);
    this.maybeSweep(now);
    return null;
  }

  addTokens(checks: readonly LimitCheck[], tokens: number, now: number): void {
    if (!(tokens > 0)) return;
    for (const check of checks) if (check.kind === 'tokens') this.add(check, tokens, now);
  }

  used(check: LimitCheck, now: number): number {
    return this.current(check.key, windowStart(check.window, now))?.count ?? 0;
  }

  private add(check: LimitCheck, amount: number, now: number): void {
    const start = windowStart(check.window, now);
    const c = this.counters.get(check.key);
    if (c && c.start === start) c.count += amount;
    else this.counters.set(check.key, { start, count: amount });
  }

  noteAbnormal(scope: string, now: number): void {
    let w = this.abnormal.get(scope);
    if (!w) this.abnormal.set(scope, (w = { times: [], tripped: false }));
    w.times.push(now);
    while (w.times.length > 0 && now - w.times[0] >= this.rule.windowMs) w.times.shift();
    if (w.times.length > this.rule.threshold + 1) w.times.shift();
    if (w.times.length > this.rule.threshold) w.tripped = true;
  }

  isSwitched(scope: string, now: number): boolean {
    const w = this.abnormal.get(scope);
    if (!w || !w.tripped) return false;
    const last = w.times[w.times.length - 1];
    if (now - last < this.rule.windowMs) return true;
    // The primary's last window is clean again: traffic returns to it.
    this.abnormal.delete(scope);
    return false;
  }

  /** Drops counters of windows that ended, so idle accounts do not hold memory forever. */
  private maybeSweep(now: number): void {
    if (now - this.lastSweep < SWEEP_EVERY_MS) return;
    this.lastSweep = now;
    for (const [key, c] of this.counters) if (now - c.start > WINDOW_MS.day) this.counters.delete(key);
    for (const [scope, w] of this.abnormal) {
      const last = w.times[w.times.length - 1];
      if (last === undefined || now - last >= this.rule.windowMs) this.abnormal.delete(scope);
    }
  }
}
