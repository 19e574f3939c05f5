import { describe, expect, it } from 'vitest';
import type { HealthBoard, HealthMark, SwitchOverRule } from './board';
import { SwitchOverWindows } from './switch-over';

const rule = { threshold: 5, windowMs: 60_000 };
const T = 1_000_000;

/** A board as another instance would see it: what was counted, and marks it can send. */
function recordingBoard() {
  const counted: [number, number, SwitchOverRule][] = [];
  const listeners = new Set<(m: HealthMark) => void>();
  const board: HealthBoard = {
    shared: true,
    announce() {},
    countAbnormal: (ownerId, level, r) => { counted.push([ownerId, level, r]); },
    onMark: (l) => { listeners.add(l); return () => listeners.delete(l); },
  };
  return { board, counted, send: (m: HealthMark) => { for (const l of listeners) l(m); } };
}

describe('switch-over windows', () => {
  it('switch a Level over only when MORE than the threshold of abnormal results fall within the window', () => {
    const s = new SwitchOverWindows(rule);
    for (let i = 0; i < 5; i++) s.noteAbnormal(7, 1, T + i * 1000);
    expect(s.isSwitched(7, 1, T + 5000)).toBe(false);
    s.noteAbnormal(7, 1, T + 5000);
    expect(s.isSwitched(7, 1, T + 5000)).toBe(true);
  });

  it('never switch on results spread wider than the window', () => {
    const s = new SwitchOverWindows(rule);
    for (let i = 0; i < 20; i++) s.noteAbnormal(7, 1, T + i * 15_000);
    expect(s.isSwitched(7, 1, T + 20 * 15_000)).toBe(false);
  });

  it('stay switched while abnormal results keep coming, and return once the last window is clean', () => {
    const s = new SwitchOverWindows(rule);
    for (let i = 0; i < 6; i++) s.noteAbnormal(7, 1, T);
    s.noteAbnormal(7, 1, T + 50_000);
    expect(s.isSwitched(7, 1, T + 100_000)).toBe(true);
    expect(s.isSwitched(7, 1, T + 110_000 - 1)).toBe(true);
    expect(s.isSwitched(7, 1, T + 110_000)).toBe(false);
    // A single new result after that is not a switch again.
    s.noteAbnormal(7, 1, T + 120_000);
    expect(s.isSwitched(7, 1, T + 120_000)).toBe(false);
  });

  it('forget a switch whose window went clean even when nobody asked in between', () => {
    const s = new SwitchOverWindows(rule);
    for (let i = 0; i < 6; i++) s.noteAbnormal(7, 1, T);
    s.noteAbnormal(7, 1, T + 5 * 60_000);
    expect(s.isSwitched(7, 1, T + 5 * 60_000)).toBe(false);
  });

  it('keep each Owner and Level apart; a threshold of 0 switches on the first abnormal result', () => {
    const s = new SwitchOverWindows(rule);
    for (let i = 0; i < 6; i++) s.noteAbnormal(7, 1, T);
    expect(s.isSwitched(7, 2, T)).toBe(false);
    expect(s.isSwitched(8, 1, T)).toBe(false);
    const eager = new SwitchOverWindows({ threshold: 0, windowMs: 1000 });
    eager.noteAbnormal(1, 0, T);
    expect(eager.isSwitched(1, 0, T + 999)).toBe(true);
    expect(eager.isSwitched(1, 0, T + 1000)).toBe(false);
  });

  it('count every abnormal result on the board too, with the rule', () => {
    const { board, counted } = recordingBoard();
    const s = new SwitchOverWindows(rule, board);
    s.noteAbnormal(7, 1, T);
    s.noteAbnormal(7, 2, T);
    expect(counted).toEqual([[7, 1, rule], [7, 2, rule]]);
  });

  it('honour a switch heard from the board until it ends, and a clear at once', () => {
    const { board, send } = recordingBoard();
    const s = new SwitchOverWindows(rule, board);
    const now = Date.now();
    send({ scope: 'level', ownerId: 7, id: 1, state: 'switched', ms: 500 });
    expect(s.isSwitched(7, 1, now)).toBe(true);
    expect(s.isSwitched(7, 2, now)).toBe(false);
    expect(s.isSwitched(7, 1, now + 2000)).toBe(false);
    send({ scope: 'level', ownerId: 7, id: 1, state: 'switched', ms: 60_000 });
    expect(s.isSwitched(7, 1, now + 2000)).toBe(true);
    send({ scope: 'level', ownerId: 7, id: 1, state: 'switched', ms: 0 });
    expect(s.isSwitched(7, 1, now + 2000)).toBe(false);
    // Key marks and states it does not know leave the Levels alone.
    send({ scope: 'key', ownerId: 7, id: 1, state: 'sleeping', ms: 60_000 });
    send({ scope: 'level', ownerId: 7, id: 1, state: 'half-open', ms: 60_000 });
    expect(s.isSwitched(7, 1, now + 2000)).toBe(false);
  });
});
