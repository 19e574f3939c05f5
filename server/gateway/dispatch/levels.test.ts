import { describe, expect, it } from 'vitest';
import { parseAllowLevels } from '../../domain/access/allow-lists';
import { parseSwitchOver } from '../../domain/mapping/mappers';
import { SwitchOverWindows } from '../key-health/switch-over';
import { levelPlan } from './levels';

describe('Level plan', () => {
  const all = parseAllowLevels('');
  const store = () => new SwitchOverWindows({ threshold: 2, windowMs: 60_000 });

  it('follows the SWITCH_OVER chain from the start Level, stopping at the first repeat', () => {
    expect(levelPlan(1, new Map(), 1, store(), all, 0)).toEqual([1]);
    expect(levelPlan(1, parseSwitchOver('1=2, 2=3, 3=1'), 1, store(), all, 0)).toEqual([1, 2, 3]);
    expect(levelPlan(2, parseSwitchOver('1=2, 2=3, 3=1'), 1, store(), all, 0)).toEqual([2, 3, 1]);
  });

  it('leaves out Levels outside AllowLevels', () => {
    expect(levelPlan(1, parseSwitchOver('1=2, 2=3'), 1, store(), parseAllowLevels('1,3'), 0)).toEqual([1, 3]);
    expect(levelPlan(1, new Map(), 1, store(), parseAllowLevels('2'), 0)).toEqual([]);
  });

  it('moves a switched-over Level to the end, as the last resort, until its window is clean', () => {
    const s = store();
    const now = 1_000_000;
    for (let i = 0; i < 3; i++) s.noteAbnormal(1, 1, now);
    const so = parseSwitchOver('1=2');
    expect(levelPlan(1, so, 1, s, all, now)).toEqual([2, 1]);
    // another Owner's Level 1 is not switched
    expect(levelPlan(1, so, 9, s, all, now)).toEqual([1, 2]);
    expect(levelPlan(1, so, 1, s, all, now + 120_000)).toEqual([1, 2]);
  });
});
