import { defineConfig } from 'vitest/config';

export default defineConfig({
  // One graphql module instance: Pothos and yoga load graphql's CommonJS build, so the tests must too.
  resolve: { alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }] },
  test: {
    include: ['src/**/*.test.ts', 'rest-compat/**/*.test.ts', 'test/**/*.test.ts', 'tools/**/*.test.ts'],
    globalSetup: ['test/kit/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
