import { describe, expect, it } from 'vitest';
import type { UsageEvent } from '../../domain/usage/types';
import type { PooledKey } from '../../state/provider-keys/key-pool';
import { MemoryAdmissionStore } from '../admission/memory-store';
import { FakeBases } from '../admission/store.contract';
import { counterKeys } from '../admission/store';
import type { Delivered } from '../dispatch/attempt';
import { SwitchOverWindows } from '../key-health/switch-over';
import { releaseReservation, settle, type SettleDeps } from './settle';
import { admit } from './admission';
import { accountRow, callFor } from './test-support';

function deps() {
  const records: UsageEvent[] = [];
  const bases = new FakeBases();
  bases.credits.set(42, 10);
  const admission = new MemoryAdmissionStore(bases, { refreshMs: 60_000 });
  const switchOver = new SwitchOverWindows({ threshold: 0, windowMs: 60_000 });
  const d: SettleDeps & { admission: MemoryAdmissionStore } = { usage: { record: (e) => records.push(e) }, switchOver, admission };
  return { d, records, admission, switchOver };
}

const delivered = (o: Partial<Delivered> = {}): Delivered => ({
  kind: 'delivered', status: 200, usage: { prompt: 1000, completion: 100, reasoning: 0, cached: 0, cacheWrite: 0 },
  complete: true, streamed: false, events: 0, abnormal: false, clientGone: false, ...o,
});

/** A call admitted (its reservation open) and served by key 77 on Level 4 with gpt-4o-mini. */
async function served(d: SettleDeps & { admission: MemoryAdmissionStore }, fields: Parameters<typeof accountRow>[0] = {}) {
  const c = callFor({ row: accountRow({ tpm: 10_000, ...fields }), body: { model: 'gpt-4o-mini', max_tokens: 500, messages: [] } });
  const v = await admit({ settings: { userMinBalance: 0, userApiBalance: 1, upstreamTimeoutMs: 1000 }, admission: d.admission }, c);
  expect(v).toBeNull();
  c.servedBy = { id: 77 } as PooledKey;
  c.servedLevel = 4;
  c.servedModel = 'gpt-4o-mini';
  return c;
}

const tpm = (c: ReturnType<typeof callFor>) => c.profile.checks[0];
const creditKey = counterKeys.credit(1, 42);

describe('settle', () => {
  it('records the usage with the request ID at the price of the served model and settles the reservation to it', async () => {
    const { d, records, admission } = deps();
    const c = await served(d, { factor: 2 });
    expect(admission.credit(creditKey)!.reserved).toBeGreaterThan(0);
    // Read at admission time: GCRA drains as time passes.
    const at = c.reservation!.now;
    expect(admission.rateUsed(tpm(c), at)).toBe(c.raw.length + 500); // the request's 54 bytes bound its input, + 500 output
    settle(d, c, delivered());
    const credit = 2 * (1000 * 0.15 + 100 * 0.6) / 1e6;
    expect(records).toEqual([expect.objectContaining({ accountId: 42, model: 'gpt-4o-mini', level: 4, keyId: 77, endpoint: '/v1/chat/completions', prompt: 1000, completion: 100, status: 'ok', requestId: c.id })]);
    expect(records[0].creditUsed).toBeCloseTo(credit, 12);
    expect(admission.credit(creditKey)).toEqual({ spendable: 10 - records[0].creditUsed, reserved: 0 });
    expect(admission.rateUsed(tpm(c), at)).toBe(1100);
    expect(c.reservation).toBeNull();
  });

  it('bills a whole answer that came without usage by estimate: four bytes a token of request and of answer', async () => {
    const { d, records, admission } = deps();
    const c = await served(d);
    const body = Buffer.from(JSON.stringify({ id: 'x', choices: [{ message: { role: 'assistant', content: 'a'.repeat(400) } }] }));
    settle(d, c, delivered({ usage: null, complete: false, body }));
    expect(records[0]).toMatchObject({ prompt: Math.ceil(c.raw.length / 4), completion: Math.ceil(body.length / 4) });
    expect(records[0].creditUsed).toBeGreaterThan(0);
    expect(admission.credit(creditKey)).toEqual({ spendable: 10 - records[0].creditUsed, reserved: 0 });
  });

  it('bills nothing for a passed-through upstream error, and the reservation is released', async () => {
    const { d, records, admission } = deps();
    const c = await served(d);
    settle(d, c, delivered({ status: 404, usage: null }));
    expect(records).toEqual([]);
    releaseReservation(d, c);
    expect(admission.credit(creditKey)).toEqual({ spendable: 10, reserved: 0 });
    expect(admission.rateUsed(tpm(c), Date.now())).toBe(0);
    expect(admission.open).toBe(0);
  });

  it('estimates a cut stream, marks it abnormal and counts it for switch-over', async () => {
    const { d, records, switchOver } = deps();
    const c = await served(d);
    settle(d, c, delivered({ streamed: true, complete: false, usage: null, events: 9, abnormal: true }));
    expect(records[0]).toMatchObject({ prompt: Math.ceil(c.raw.length / 4), completion: 9, status: 'abnormal' });
    expect(switchOver.isSwitched(1, 4, Date.now())).toBe(true);
  });

  it('charges Root and Owners nothing from a balance, but records their usage', async () => {
    const { d, records, admission } = deps();
    const c = await served(d, { role: 'owner' });
    expect(c.reservation!.credit).toBeNull();
    settle(d, c, delivered());
    expect(records).toHaveLength(1);
    expect(admission.credit(creditKey)).toBeUndefined();
  });
});
