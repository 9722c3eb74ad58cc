import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // On their own: `npm run test:faults`, `npm run test:hostile`, `npm run test:week`. The whole
    // homes on the simulation kernel run here, beside the rest: load changes only how long they take.
    exclude: ['**/node_modules/**', 'test/faults/**', 'test/hostile/**', 'test/week/**'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
