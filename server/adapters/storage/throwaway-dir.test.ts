import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeThrowawayDir } from './throwaway-dir';

describe('throwaway database folders (memory://)', () => {
  it("are removed when closed, and a killed process's folder by the next one made", () => {
    // A process that has ended: its ID names a folder nobody will remove for it.
    const gone = spawnSync(process.execPath, ['-e', '0']).pid!;
    const left = path.join(tmpdir(), `switchyard-memory-${gone}-test`);
    // The parent of this test runner still runs: its folder stays.
    const alive = path.join(tmpdir(), `switchyard-memory-${process.ppid}-test`);
    mkdirSync(left, { recursive: true });
    mkdirSync(alive, { recursive: true });
    try {
      const dir = makeThrowawayDir();
      expect(existsSync(dir.path)).toBe(true);
      expect(path.basename(dir.path)).toMatch(new RegExp(`^switchyard-memory-${process.pid}-`));
      expect(existsSync(left)).toBe(false);
      expect(existsSync(alive)).toBe(true);
      dir.remove();
      dir.remove();
      expect(existsSync(dir.path)).toBe(false);
    } finally {
      rmSync(left, { recursive: true, force: true });
      rmSync(alive, { recursive: true, force: true });
    }
  });
});
