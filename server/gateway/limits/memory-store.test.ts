import { describe, expect, it } from 'vitest';
import { MemoryLimitStore } from './memory-store';
import { accountChecks, modelChecks, refusalHeaders } from './account-limits';
import type { LimitCheck } from './counters';

const rpm = (limit: number): LimitCheck => ({ key: 'a:1:rpm', name: 'RPM', kind: 'requests', window: 'minute', limit });
const tpm = (limit: number): LimitCheck => ({ key: 'a:1:tpm', name: 'TPM', kind: 'tokens', window: 'minute', limit });

describe('MemoryLimitStore counters', () => {
  it('admits up to the request limit within a clock-aligned window, then refuses until it ends', () => {
    const s = new MemoryLimitStore({ threshold: 5, windowMs: 60_000 });
    const t0 = 1_700_000_080_000; // 40 s into a minute
    expect(s.admit([rpm(2)], t0)).toBeNull();
    expect(s.admit([rpm(2)], t0 + 1)).toBeNull();
    const r = s.admit([rpm(2)], t0 + 2)!;
    expect(r.check.name).toBe('RPM');
    expect(r.used).toBe(2);
    expect(r.resetAt).toBe(t0 - (t0 % 60_000) + 60_000);
    expect(refusalHeaders(r, t0 + 2)).toMatchObject({ 'retry-after': '20', 'x-ratelimit-limit': '2', 'x-ratelimit-remaining': '0', 'x-ratelimit-scope': 'RPM' });
    expect(s.admit([rpm(2)], r.resetAt)).toBeNull();
  });

  it('counts nothing when one of several checks refuses', () => {
    const s = new MemoryLimitStore({ threshold: 5, windowMs: 60_000 });
    const other: LimitCheck = { key: 'm:1:x:rpm', name: 'x rpm', kind: 'requests', window: 'minute', limit: 1 };
    expect(s.admit([rpm(10), other], 0)).toBeNull();
    expect(s.admit([rpm(10), other], 1)?.check.name).toBe('x rpm');
    expect(s.used(rpm(10), 2)).toBe(1);
  });

  it('refuses once a token budget is spent; tokens are added after the answer', () => {
    const s = new MemoryLimitStore({ threshold: 5, windowMs: 60_000 });
    expect(s.admit([tpm(100)], 0)).toBeNull();
    s.addTokens([tpm(100)], 60, 1);
    expect(s.admit([tpm(100)], 2)).toBeNull();
    s.addTokens([tpm(100)], 60, 3);
    expect(s.admit([tpm(100)], 4)?.used).toBe(120);
  });

  it('uses UTC days for RPD/TPD', () => {
    const s = new MemoryLimitStore({ threshold: 5, windowMs: 60_000 });
    const rpd: LimitCheck = { key: 'a:1:rpd', name: 'RPD', kind: 'requests', window: 'day', limit: 1 };
    const lateEvening = Date.UTC(2025, 0, 1, 23, 59, 0);
    expect(s.admit([rpd], lateEvening)).toBeNull();
    expect(s.admit([rpd], lateEvening + 30_000)?.resetAt).toBe(Date.UTC(2025, 0, 2));
    expect(s.admit([rpd], Date.UTC(2025, 0, 2, 0, 0, 1))).toBeNull();
  });

  it('builds checks only for set limits (null and 0 are unlimited)', () => {
    expect(accountChecks({ id: 7, rpm: 10, rph: null, rpd: 0, tpm: null, tph: 5, tpd: null }).map((c) => c.name)).toEqual(['RPM', 'TPH']);
    expect(modelChecks(7, 'gpt-4o', { rpm: 3 })).toEqual([{ key: 'm:7:gpt-4o:rpm', name: 'gpt-4o rpm', kind: 'requests', window: 'minute', limit: 3 }]);
    expect(modelChecks(7, 'gpt-4o', undefined)).toEqual([]);
  });
});

describe('MemoryLimitStore switch-over windows', () => {
  it('switches after MORE than the threshold within the window and returns once the last window is clean', () => {
    const s = new MemoryLimitStore({ threshold: 5, windowMs: 60_000 });
    for (let i = 0; i < 5; i++) s.noteAbnormal('so:1:1', i * 1000);
    expect(s.isSwitched('so:1:1', 5000)).toBe(false);
    s.noteAbnormal('so:1:1', 5000);
    expect(s.isSwitched('so:1:1', 5001)).toBe(true);
    expect(s.isSwitched('so:1:1', 64_999)).toBe(true);
    expect(s.isSwitched('so:1:1', 65_000)).toBe(false);
    expect(s.isSwitched('so:1:1', 65_001)).toBe(false);
  });

  it('does not switch when the abnormal results are spread over more than a window', () => {
    const s = new MemoryLimitStore({ threshold: 5, windowMs: 60_000 });
    for (let i = 0; i < 12; i++) s.noteAbnormal('so:1:2', i * 15_000);
    expect(s.isSwitched('so:1:2', 12 * 15_000)).toBe(false);
  });
});
