import { defineConfig } from 'vitest/config';

/** The fault suite: the real daemon process against the demo world, one scenario per file. */
export default defineConfig({
  test: {
    include: ['test/faults/**/*.test.ts'],
    testTimeout: 180_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Scenarios run on an accelerated clock: two at once share the 2 cores without starving each other.
    maxWorkers: 2,
    fileParallelism: true,
  },
});
