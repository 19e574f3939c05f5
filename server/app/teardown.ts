import { errorFields, type Logger } from '../core/log';

/** One closing step; `deadline` (epoch ms) is when the shutdown grace runs out. */
type Step = (deadline: number) => unknown;

/**
 * What the composition root opened, closed in the reverse order it was registered: a start
 * that fails half-way closes exactly what it had opened, and shutdown is one list read from
 * the bottom up. A step that fails is logged and the next still runs (the database must close
 * even when Redis will not).
 */
export class Teardown {
  private readonly steps: { name: string; step: Step }[] = [];

  constructor(private readonly log: Logger) {}

  add(name: string, step: Step): void {
    this.steps.push({ name, step });
  }

  async run(deadline = Date.now()): Promise<void> {
    for (let s = this.steps.pop(); s; s = this.steps.pop()) {
      try {
        await s.step(deadline);
      } catch (err) {
        this.log.warn('shutdown_step_failed', { step: s.name, ...errorFields(err) });
      }
    }
  }
}
