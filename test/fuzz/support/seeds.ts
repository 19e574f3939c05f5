import { randomInt } from 'node:crypto';

/** The seed every run replays, so a regression found once is found again on every CI run. */
export const FIXED_SEED = 20_261_123;

export interface FuzzPass {
  label: 'fixed' | 'fresh' | 'replay';
  seed: number;
}

/**
 * Each run fuzzes twice: with the fixed seed and with a fresh random one (new ground each
 * run). `FUZZ_SEED=<n>` replays one seed alone, exactly: generation depends on the seed only.
 */
export function fuzzPasses(): FuzzPass[] {
  const replay = process.env.FUZZ_SEED;
  if (replay !== undefined && replay !== '') {
    const seed = Number(replay);
    if (!Number.isSafeInteger(seed)) throw new Error(`FUZZ_SEED must be an integer, got ${JSON.stringify(replay)}`);
    return [{ label: 'replay', seed }];
  }
  return [{ label: 'fixed', seed: FIXED_SEED }, { label: 'fresh', seed: randomInt(0, 2 ** 31 - 1) }];
}

/** `FUZZ_SCALE=4` sends four times as many requests (a longer local hunt); default 1. */
export function scaled(n: number): number {
  const s = Number(process.env.FUZZ_SCALE ?? '1');
  return Math.max(1, Math.round(n * (Number.isFinite(s) && s > 0 ? s : 1)));
}

export function replayHint(seed: number, file: string): string {
  return `replay with: FUZZ_SEED=${seed} npx vitest run ${file}`;
}
