import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['contract/**/*.test.ts', 'server/**/*.test.ts', 'console/**/*.test.ts', 'clients/*.test.ts', 'test/**/*.test.ts', 'scripts/**/*.test.ts'],
    // uWS is a native addon with process-wide state: one process per test file.
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 120_000,
    reporters: ['default'],
  },
});
