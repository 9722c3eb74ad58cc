import { defineConfig } from 'vitest/config';
import { homeRuns } from './vitest.week.config.js';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // The fault and hostile suites and the whole-home runs go on their own: `npm run test:faults`, `npm run test:hostile`, `npm run test:week`.
    exclude: ['**/node_modules/**', 'test/faults/**', 'test/hostile/**', ...homeRuns],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
