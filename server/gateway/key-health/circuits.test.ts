import { describe, expect, it } from 'vitest';
import type { HealthBoard, HealthMark } from './board';
import { KeyCircuits } from './circuits';

function setup(rule = { failureThreshold: 3, openMs: 1000, openMaxMs: 5000, probeTimeoutMs: 500 }) {
  const announced: HealthMark[] = [];
  const listeners = new Set<(m: HealthMark) => void>();
  const lines: { level: string; event: string; fields: Record<string, unknown> }[] = [];
  const board: HealthBoard = {
    shared: true,
    announce: (m) => { announced.push(m); },
    countAbnormal() {},
    onMark: (l) => { listeners.add(l); return () => listeners.delete(l); },
  };
  const log = {
    warn: (event: string, fields: Record<string, unknown> = {}) => { lines.push({ level: 'warn', event, fields }); },
    debug: (event: string, fields: Record<string, unknown> = {}) => { lines.push({ level: 'debug', event, fields }); },
  };
  const circuits = new KeyCircuits(rule, log, board);
  const hear = (m: HealthMark) => { for (const l of listeners) l(m); };
  return { circuits, announced, lines, hear };
}

const key = { id: 5, ownerId: 2, level: 1 };

describe('key circuits: healthy → failing → open → half-open → healthy', () => {
  it('opens after the threshold of consecutive failures, probes once after the cool-down, and closes on success', () => {
    const { circuits, announced, lines } = setup();
    expect(circuits.admit(key, 'm', 0)).toBe(true);
    circuits.failed(key, undefined, 'ECONNREFUSED', 10);
    expect(circuits.stateOf(2, 5)).toBe('failing');
    circuits.failed(key, undefined, 'ECONNREFUSED', 20);
    expect(circuits.admit(key, 'm', 25)).toBe(true);
    circuits.failed(key, undefined, 'ECONNREFUSED', 30);
    expect(circuits.stateOf(2, 5)).toBe('open');
    expect(circuits.admit(key, 'm', 500)).toEqual({ until: 1030 });
    expect(lines.filter((l) => l.level === 'warn').map((l) => l.event)).toEqual(['provider_key_opened']);
    expect(announced).toEqual([{ scope: 'key', ownerId: 2, id: 5, model: '*', state: 'open', ms: 1000 }]);
    // The cool-down is over: one request probes, the next waits for it.
    expect(circuits.admit(key, 'm', 1030)).toBe(true);
    expect(circuits.stateOf(2, 5)).toBe('half-open');
    expect(circuits.admit(key, 'm', 1100)).toEqual({ until: 1530 });
    circuits.succeeded(key, 'm', 1200);
    expect(circuits.stateOf(2, 5)).toBe('healthy');
    expect(circuits.admit(key, 'm', 1201)).toBe(true);
    expect(lines.at(-1)).toMatchObject({ level: 'warn', event: 'provider_key_closed', fields: { key: 5, out_ms: 170 } });
    expect(announced.at(-1)).toEqual({ scope: 'key', ownerId: 2, id: 5, model: '*', state: 'open', ms: 0 });
  });

  it('doubles the cool-down each time a probe fails, up to the most, and a success starts over', () => {
    const { circuits } = setup();
    for (let i = 0; i < 3; i++) circuits.failed(key, undefined, 'timeout', 0);
    const cooldowns: number[] = [];
    let now = 0;
    for (let round = 0; round < 4; round++) {
      const gate = circuits.admit(key, 'm', now);
      expect(gate).not.toBe(true);
      const until = (gate as { until: number }).until;
      cooldowns.push(until - now);
      now = until;
      expect(circuits.admit(key, 'm', now)).toBe(true);
      circuits.failed(key, undefined, 'timeout', now);
    }
    expect(cooldowns).toEqual([1000, 2000, 4000, 5000]);
    const gate = circuits.admit(key, 'm', now) as { until: number };
    expect(circuits.admit(key, 'm', gate.until)).toBe(true);
    circuits.succeeded(key, 'm', gate.until);
    for (let i = 0; i < 3; i++) circuits.failed(key, undefined, 'timeout', gate.until + 1);
    expect(circuits.admit(key, 'm', gate.until + 2)).toEqual({ until: gate.until + 1001 });
  });

  it('keeps a model that fails on its own out of rotation while the key serves other models', () => {
    const { circuits, announced } = setup({ failureThreshold: 1, openMs: 1000, openMaxMs: 1000, probeTimeoutMs: 100 });
    circuits.failed(key, 'gpt-x', 'upstream answered 503', 0);
    expect(circuits.admit(key, 'gpt-x', 10)).toEqual({ until: 1000 });
    expect(circuits.admit(key, 'gpt-y', 10)).toBe(true);
    expect(announced[0]).toMatchObject({ model: 'gpt-x', state: 'open' });
    // A success of another model does not close it.
    circuits.succeeded(key, 'gpt-y', 20);
    expect(circuits.stateOf(2, 5, 'gpt-x')).toBe('open');
    expect(circuits.report(2, 30)).toEqual([
      { keyId: 5, model: 'gpt-x', state: 'open', since: 0, until: 1000, failures: 1, lastError: 'upstream answered 503', lastErrorAt: 0 },
    ]);
  });

  it('a probe whose request went away lets the next request probe at once', () => {
    const { circuits } = setup({ failureThreshold: 1, openMs: 100, openMaxMs: 100, probeTimeoutMs: 10_000 });
    circuits.failed(key, undefined, 'x', 0);
    expect(circuits.admit(key, 'm', 100)).toBe(true);
    expect(circuits.admit(key, 'm', 101)).not.toBe(true);
    circuits.release(key, 'm');
    expect(circuits.admit(key, 'm', 102)).toBe(true);
  });

  it('applies opens and closes heard from other instances without announcing them back', () => {
    const now = Date.now();
    const s = setup();
    s.hear({ scope: 'key', ownerId: 2, id: 5, model: '*', state: 'open', ms: 60_000 });
    const gate = s.circuits.admit(key, 'm', now) as { until: number };
    expect(gate.until).toBeGreaterThanOrEqual(now + 59_000);
    expect(s.circuits.report(2)[0]).toMatchObject({ state: 'open', lastError: 'opened by another instance' });
    s.hear({ scope: 'key', ownerId: 2, id: 5, model: '*', state: 'open', ms: 0 });
    expect(s.circuits.admit(key, 'm', now)).toBe(true);
    expect(s.announced).toEqual([]);
    expect(s.lines.filter((l) => l.level === 'warn')).toEqual([]);
    // Sleep marks and unknown states are not circuits.
    s.hear({ scope: 'key', ownerId: 2, id: 5, state: 'sleeping', ms: 60_000 });
    s.hear({ scope: 'key', ownerId: 2, id: 5, model: '*', state: 'quarantined', ms: 60_000 });
    expect(s.circuits.admit(key, 'm', now)).toBe(true);
  });
});
