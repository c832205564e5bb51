import { defineConfig } from 'vitest/config';

export default defineConfig({
  // One graphql module instance: Pothos and yoga load graphql's CommonJS build, so the tests must too.
  resolve: { alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }] },
  test: {
    include: ['src/**/*.test.ts', 'rest-compat/**/*.test.ts', 'test/**/*.test.ts', 'tools/**/*.test.ts'],
    globalSetup: ['test/kit/global-setup.ts'],
    // A hang-catcher, not a speed check: with two files at once a test may take twice its usual time.
    testTimeout: 60_000,
    hookTimeout: 90_000,
    pool: 'forks',
    // Two files at a time even on two cores (vitest would take one): the files spend much of their
    // time waiting on child processes, PostgreSQL and the engines. The suite took 861 s one at a
    // time and 598 s two at a time on this machine.
    maxWorkers: 2,
  },
});
