import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { processRuns } from '../../core/processes';

const PREFIX = 'switchyard-memory-';

/**
 * The folders of throwaway databases whose process is gone (killed before it could remove
 * its own): each names its process, so the next one to start removes them.
 */
function sweep(root: string): void {
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(/^switchyard-memory-(\d+)-/.exec(name)?.[1]);
    if (pid > 0 && pid !== process.pid && !processRuns(pid)) rmSync(path.join(root, name), { recursive: true, force: true });
  }
}

export interface ThrowawayDir {
  path: string;
  /** Removes the folder and what is in it; safe to call more than once. */
  remove(): void;
}

/**
 * A private folder under the system's temporary folder for a database that lasts as long as
 * this process (memory://), removed when it closes or the process exits. The files live in
 * the kernel's page cache rather than in the process's own memory (decisions.md, "Footprint").
 */
export function makeThrowawayDir(): ThrowawayDir {
  const root = tmpdir();
  sweep(root);
  const dir = mkdtempSync(path.join(root, `${PREFIX}${process.pid}-`));
  const remove = () => {
    process.off('exit', remove);
    rmSync(dir, { recursive: true, force: true });
  };
  process.on('exit', remove);
  return { path: dir, remove };
}
