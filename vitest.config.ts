import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['contract/**/*.test.ts', 'server/**/*.test.ts', 'console/**/*.test.ts', 'clients/*.test.ts', 'test/**/*.test.ts', 'scripts/**/*.test.ts'],
    // uWS is a native addon with process-wide state: one process per test file.
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // Probes once per run for what npm cannot bring (Redis, Java, python3's libraries…), and names
    // what the skipped tests needed after vitest's summary: server/testing/requirements.ts.
    globalSetup: ['server/testing/requirements-setup.ts'],
    reporters: ['default', './server/testing/requirements-reporter.ts'],
  },
});
