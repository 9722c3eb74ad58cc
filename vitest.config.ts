import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * Tests that run a daemon or its loops on an accelerated wall clock (`acceleratedClock`, a spawned
 * daemon with a speed): a stall of the machine becomes simulated minutes there, so they run one at
 * a time, after the rest, with no other test file beside them.
 */
const accelerated = [
  'test/app.test.ts',
  'test/app-lifecycle.test.ts',
  'test/comfort-e2e.test.ts',
  'test/control-guard.test.ts',
  'test/e2e-daemon.test.ts',
  'test/field-truth.test.ts',
  'test/fleet-daemon.test.ts',
  'test/hub/hub-lockdown.test.ts',
  'test/plan-report-e2e.test.ts',
];

// On their own: `npm run test:faults`, `npm run test:hostile`, `npm run test:week`. The whole
// homes on the simulation kernel run here, beside the rest: load changes only how long they take.
const ownSuites = ['**/node_modules/**', 'test/faults/**', 'test/hostile/**', 'test/week/**'];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    projects: [
      {
        test: {
          name: 'unit',
          include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
          exclude: [...ownSuites, ...accelerated],
          // Every core (Vitest's default leaves one free): these wait on state, not on time.
          maxWorkers: availableParallelism(),
          sequence: { groupOrder: 0 },
        },
        extends: true,
      },
      {
        test: {
          name: 'accelerated',
          include: accelerated,
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
        },
        extends: true,
      },
    ],
  },
});
