import { defineConfig } from 'vitest/config';
import { homeRuns } from './vitest.homes.config.js';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // On their own: `npm run test:faults`, `npm run test:hostile`, `npm run test:homes`, `npm run test:week`.
    exclude: ['**/node_modules/**', 'test/faults/**', 'test/hostile/**', 'test/week/**', ...homeRuns],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
