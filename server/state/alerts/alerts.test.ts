import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../adapters/storage/database';
import { openTestDatabase } from '../../testing/database';
import { createLogger } from '../../core/log';
import { AccountAlerts, type AccountAlert } from './alerts';

let database: Database;
let close: (() => Promise<void>) | undefined;
const lines: string[] = [];
beforeAll(async () => {
  ({ database, close } = await openTestDatabase());
});
afterAll(async () => { await close?.(); });

describe('account alerts', () => {
  it('raise once per account, kind and period across instances, telling listeners and logging one line', async () => {
    const log = createLogger((l) => lines.push(l), 'info');
    // Two instances on one database.
    const a = new AccountAlerts(database.db, log);
    const b = new AccountAlerts(database.db, log);
    const heard: AccountAlert[] = [];
    a.subscribe((x) => heard.push(x));
    const unsubscribe = b.subscribe((x) => heard.push(x));
    const alert = { kind: 'soft_limit' as const, accountId: 1, ownerId: 1, period: 'm202611', value: 8, threshold: 8 };
    const results = await Promise.all([...Array.from({ length: 10 }, () => a.raise(alert)), ...Array.from({ length: 10 }, () => b.raise(alert))]);
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(heard).toEqual([expect.objectContaining({ kind: 'soft_limit', accountId: 1, period: 'm202611', at: expect.any(Date) })]);
    expect(lines.filter((l) => l.includes('account_alert'))).toHaveLength(1);
    // A restart remembers nothing in memory: the database still says once.
    expect(await new AccountAlerts(database.db, log).raise(alert)).toBe(false);
    // Another period (or kind) is another alert.
    unsubscribe();
    expect(await a.raise({ ...alert, period: 'm202612' })).toBe(true);
    expect(await a.raise({ ...alert, kind: 'low_balance', period: '7' })).toBe(true);
    expect(heard).toHaveLength(3);
  });
});
