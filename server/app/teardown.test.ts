import { describe, expect, it } from 'vitest';
import { createLogger } from '../core/log';
import { Teardown } from './teardown';

describe('Teardown', () => {
  it('closes in the reverse order of registration, once, going on past a failing step with a log line', async () => {
    const lines: string[] = [];
    const t = new Teardown(createLogger((l) => lines.push(l)));
    const closed: string[] = [];
    t.add('database', () => { closed.push('database'); });
    t.add('redis', () => { throw new Error('connection reset'); });
    t.add('usage', async (deadline) => { closed.push(`usage until ${deadline}`); });
    await t.run(42);
    await t.run(43);
    expect(closed).toEqual(['usage until 42', 'database']);
    expect(lines.map((l) => JSON.parse(l))).toMatchObject([{ level: 'warn', event: 'shutdown_step_failed', step: 'redis', error: 'connection reset' }]);
  });
});
