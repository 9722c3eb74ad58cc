import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // The fault suite runs on its own: `npm run test:faults` (vitest.faults.config.ts).
    exclude: ['**/node_modules/**', 'test/faults/**'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
