import { defineConfig } from 'vitest/config';

/**
 * The week-long home: the whole daemon, built as it ships, against a home of
 * real peers for a simulated week at 1200×, about 9 minutes. CI runs it after the whole-home runs,
 * beside the fault suite (`.ci/run`).
 */
export default defineConfig({
  test: {
    include: ['test/week/**/*.test.ts'],
    globalSetup: ['test/week/bundle-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 900_000,
    pool: 'forks',
    maxWorkers: 1,
    fileParallelism: false,
  },
});
