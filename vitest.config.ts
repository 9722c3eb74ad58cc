import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // The fault, hostile and week suites run on their own: `npm run test:faults`, `npm run test:hostile`, `npm run test:week`.
    exclude: ['**/node_modules/**', 'test/faults/**', 'test/hostile/**', 'test/week/**'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
