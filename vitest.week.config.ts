import { defineConfig } from 'vitest/config';

/**
 * The week-long home: the whole daemon against a home of real peers for a simulated week, in one
 * process on the simulation kernel's virtual clock (src/simulation/), about 2½ minutes. The
 * kernel makes it independent of the machine's load.
 */
export default defineConfig({
  test: {
    include: ['test/week/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 900_000,
    pool: 'forks',
    maxWorkers: 1,
    fileParallelism: false,
  },
});
