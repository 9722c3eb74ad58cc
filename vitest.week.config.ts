import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * The whole homes of the simulation kernel (src/simulation/): the week-long home, the fault
 * explorer's seeds and the winter home, each the whole daemon against real peers in one process on
 * the virtual clock. The kernel makes them independent of the machine's load, not of its speed,
 * so they share the cores.
 */
export default defineConfig({
  test: {
    include: ['test/week/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 900_000,
    pool: 'forks',
    maxWorkers: availableParallelism(),
  },
});
