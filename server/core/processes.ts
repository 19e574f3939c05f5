/**
 * Whether a process with this ID runs on this host (one we may not signal runs too). What a
 * folder, lock or journal named after its process relies on to tell a leftover from a live one.
 */
export function processRuns(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
