import { describe, expect, it } from 'vitest';
import type { UsageEvent } from '../../domain/usage/types';
import type { PooledKey } from '../../state/provider-keys/key-pool';
import { MemoryLimitStore } from '../limits/memory-store';
import type { Delivered } from '../dispatch/attempt';
import { switchScope } from '../dispatch/levels';
import { settle, type SettleDeps } from './settle';
import { accountRow, callFor } from './test-call';

function deps() {
  const records: UsageEvent[] = [];
  const spent: [number, number][] = [];
  const limits = new MemoryLimitStore({ threshold: 0, windowMs: 60_000 });
  const d: SettleDeps = { usage: { record: (e) => records.push(e) }, limits, balances: { spend: (id, amount) => spent.push([id, amount]) } };
  return { d, records, spent, limits };
}

const delivered = (o: Partial<Delivered> = {}): Delivered => ({
  kind: 'delivered', status: 200, usage: { prompt: 1000, completion: 100, reasoning: 0, cached: 0, cacheWrite: 0 },
  complete: true, streamed: false, events: 0, abnormal: false, clientGone: false, ...o,
});

function served(fields: Parameters<typeof accountRow>[0] = {}) {
  const c = callFor({ row: accountRow({ tpm: 10_000, ...fields }) });
  c.checks = c.profile.checks;
  c.servedBy = { id: 77 } as PooledKey;
  c.servedLevel = 4;
  c.servedModel = 'gpt-4o-mini';
  return c;
}

describe('settle', () => {
  it('records the usage at the price of the served model, adds the tokens and lowers the balance', () => {
    const { d, records, spent, limits } = deps();
    const c = served({ factor: 2 });
    settle(d, c, delivered());
    const credit = 2 * (1000 * 0.15 + 100 * 0.6) / 1e6;
    expect(records).toEqual([expect.objectContaining({ accountId: 42, model: 'gpt-4o-mini', level: 4, keyId: 77, endpoint: '/v1/chat/completions', prompt: 1000, completion: 100, status: 'ok' })]);
    expect(records[0].creditUsed).toBeCloseTo(credit, 12);
    expect(spent).toEqual([[42, records[0].creditUsed]]);
    expect(limits.used(c.checks[0], Date.now())).toBe(1100);
  });

  it('bills nothing for a passed-through upstream error', () => {
    const { d, records, spent } = deps();
    settle(d, served(), delivered({ status: 404, usage: null }));
    expect(records).toEqual([]);
    expect(spent).toEqual([]);
  });

  it('estimates a cut stream, marks it abnormal and counts it for switch-over', () => {
    const { d, records, limits } = deps();
    const c = served();
    settle(d, c, delivered({ streamed: true, complete: false, usage: null, events: 9, abnormal: true }));
    expect(records[0]).toMatchObject({ prompt: Math.ceil(c.raw.length / 4), completion: 9, status: 'abnormal' });
    expect(limits.isSwitched(switchScope(1, 4), Date.now())).toBe(true);
  });

  it('charges Root and Owners nothing from their balance, but records their usage', () => {
    const { d, records, spent } = deps();
    settle(d, served({ role: 'owner' }), delivered());
    expect(records).toHaveLength(1);
    expect(spent).toEqual([]);
  });
});
