import { defineConfig } from 'vitest/config';

/** The hostile suite: the real daemon process under hostile input, one scenario per file. */
export default defineConfig({
  test: {
    include: ['test/hostile/**/*.test.ts'],
    testTimeout: 180_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Floods and slowloris sockets measure the daemon: one scenario at a time.
    maxWorkers: 1,
    fileParallelism: false,
  },
});
