/**
 * Listed after vitest's own reporter: one line after its summary naming what the tests skipped
 * on this machine needed (requirements.ts), so a run on a machine with Node alone says what it
 * did not test.
 */
import type { Reporter, TestModule, Vitest } from 'vitest/node';
import { skippedLine } from './requirements';

export default class RequirementsReporter implements Reporter {
  private vitest?: Vitest;

  onInit(vitest: Vitest): void {
    this.vitest = vitest;
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const missing = testModules.flatMap((m) => [...m.children.allTests('skipped')].map((t) => t.meta().missing).filter((w): w is string => Boolean(w)));
    const line = skippedLine(missing);
    if (line) this.vitest?.logger.log(line);
  }
}
