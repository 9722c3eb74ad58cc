import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // The fault and hostile suites run on their own: `npm run test:faults`, `npm run test:hostile`.
    exclude: ['**/node_modules/**', 'test/faults/**', 'test/hostile/**'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
