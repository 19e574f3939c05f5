import { defineConfig } from 'vitest/config';

/** requirements.test.ts runs vitest on the fixture here, with the project's probe and reporter. */
export default defineConfig({
  test: {
    include: ['server/testing/requirements-fixture/*.fixture.ts'],
    globalSetup: ['server/testing/requirements-setup.ts'],
    reporters: ['default', './server/testing/requirements-reporter.ts'],
  },
});
