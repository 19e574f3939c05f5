import { describe, expect, it } from 'vitest';
import { MemoryAdmissionStore } from './memory-store';
import { describeAdmissionStore, FakeBases, T0 } from './store.contract';
import { counterKeys, type AdmissionRequest } from './store';

describeAdmissionStore('memory', (env) => new MemoryAdmissionStore(env.loader, { refreshMs: env.refreshMs, onThreshold: env.onThreshold }));

let serial = 0;
const request = (fields: Partial<AdmissionRequest>): AdmissionRequest => ({
  id: `m-${++serial}`, ownerId: 1, credit: null, spend: [], rates: [], amount: 0, tokens: 0, now: T0, expiresAt: T0 + 600_000, ...fields,
});

describe('MemoryAdmissionStore', () => {
  it('answers synchronously once loaded, with a promise only on the first load', async () => {
    const loader = new FakeBases();
    loader.credits.set(5, 10);
    const store = new MemoryAdmissionStore(loader, { refreshMs: 60_000 });
    const credit = { key: counterKeys.credit(1, 5), accountId: 5, floor: 0, lowAt: null };
    const first = store.admit(request({ credit, amount: 1 }));
    expect(first).toBeInstanceOf(Promise);
    expect(await first).toBeNull();
    expect(store.admit(request({ credit, amount: 1 }))).toBeNull();
  });

  it('re-reads a stale base in the background and still answers from the old one meanwhile', async () => {
    const loader = new FakeBases();
    loader.credits.set(5, 10);
    const store = new MemoryAdmissionStore(loader, { refreshMs: 1000 });
    const credit = { key: counterKeys.credit(1, 5), accountId: 5, floor: 0, lowAt: null };
    const a = request({ credit, amount: 1 });
    await store.admit(a);
    store.settle(a, { cost: 1, tokens: 0 }, T0);
    loader.credits.set(5, 20);
    let release!: () => void;
    loader.gate = new Promise((r) => { release = r; });
    const b = request({ credit, amount: 1, now: T0 + 5000 });
    expect(store.admit(b)).toBeNull();
    expect(store.credit(credit.key)!.spendable).toBe(9);
    // Settled while the reload is under way: counted on top of what the reload reads.
    store.settle(b, { cost: 2, tokens: 0 }, T0 + 5000);
    release();
    loader.gate = null;
    await new Promise((r) => setTimeout(r, 0));
    expect(store.credit(credit.key)!.spendable).toBe(18);
    expect(loader.creditLoads).toBe(2);
  });

  it('an invalidation during a load makes the admission read again', async () => {
    const loader = new FakeBases();
    loader.credits.set(5, 1);
    const store = new MemoryAdmissionStore(loader, { refreshMs: 60_000 });
    const credit = { key: counterKeys.credit(1, 5), accountId: 5, floor: 0, lowAt: null };
    let release!: () => void;
    loader.gate = new Promise((r) => { release = r; });
    const pending = store.admit(request({ credit, amount: 3 }));
    loader.credits.set(5, 11);
    store.invalidate(5);
    loader.gate = null;
    release();
    expect(await pending).toBeNull();
    expect(loader.creditLoads).toBe(2);
  });
});
