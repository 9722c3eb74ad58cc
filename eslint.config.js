import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', 'test-artifacts/', '.tmp/', '.tmp-*/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'error',
    },
  },
  {
    // The core is pure: no I/O, no clocks, no logger.
    files: ['src/core/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: ['node:*', 'fs', 'net', 'http', 'undici', 'mqtt', 'modbus-serial', 'better-sqlite3', 'pino', '../store/*', '../spark/*', '../devices/*', '../jobs/*'],
      }],
      'no-restricted-properties': ['error', { object: 'Date', property: 'now', message: 'core takes time as an argument' }],
      'no-restricted-syntax': ['error', { selector: "NewExpression[callee.name='Date'][arguments.length=0]", message: 'core takes time as an argument' }],
    },
  },
  {
    // Command-line entry points and scripts print to the terminal by design.
    files: ['src/main.ts', 'src/cli/**/*.ts', 'scripts/**', 'bench/**'],
    rules: { 'no-console': 'off' },
  },
);
