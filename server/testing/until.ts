/**
 * Waits for something the code under test does in the background (a write after the answer,
 * a message from another instance), checking every 20 ms: tests assert on the outcome, never
 * on how long the machine took to get there.
 */
export async function until(what: () => boolean | Promise<boolean>, ms = 3_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await what())) {
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
