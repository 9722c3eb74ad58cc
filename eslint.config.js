import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * Dependencies are used through their public entry points only: a module inside a package
 * (`undici/lib/…`, `ocpp-rpc/lib/…`, `mqtt/lib/…`) is an implementation detail that its next
 * release may move or change without notice. (zod is not listed: its subpaths such as
 * `zod/v4/core` are documented entry points, and its exports map admits no others.)
 */
const runtimeDependencies = [
  'undici',
  'ocpp-rpc',
  'mqtt',
  'node-cron',
  'modbus-serial',
  'better-sqlite3',
  'pino',
  'pino-pretty',
  'pg',
  'jose',
  'yaml',
  'prom-client',
];
const runtimeInternals = {
  regex: `^(${runtimeDependencies.join('|')})/`,
  message: 'import the package itself: its inner modules are not public API',
  // A type from a package's own declaration files is gone after compilation; moved, it fails tsc.
  allowTypeImports: true,
};
/** The same for any package, in the shipped code and its scripts. */
const packageInternals = {
  regex: `^(?!(${runtimeDependencies.join('|')})/)(@[^/]+/)?[^./][^/]*/(lib|build|dist|internals?)(/|$)`,
  message: 'import the package itself: its lib/, build/ and dist/ modules are not public API',
};
/** Private members of dependencies that were reached through casts. */
const internalMembers = [
  {
    selector: 'MemberExpression[property.name=/^(_zod|_def)$/]',
    message: "zod's internals: use the schema's public accessors (.shape, .options, .unwrap(), .def)",
  },
  { selector: 'Literal[value=/^(_zod|_def)$/]', message: "zod's internals: use the schema's public accessors (.shape, .options, .unwrap(), .def)" },
  {
    selector: 'TSPropertySignature[key.name=/^(_zod|_def)$/]',
    message: "zod's internals: use the schema's public accessors (.shape, .options, .unwrap(), .def)",
  },
  {
    selector: 'MemberExpression[property.name=/^(streamBuilder|timeMatcher)$/]',
    message: 'a private field of mqtt.js or node-cron: use their public API',
  },
];

/**
 * Units in names are spelt `Kwh` and `Kw` (`energyKwh`, `maxKw`), as `Ms` and `Pct` are; SCREAMING_CASE
 * constants keep their capitals. A key that a wire or stored format spells otherwise is written quoted.
 */
const unitSpelling = [
  {
    selector: 'Identifier[name=/[a-z0-9](KWh?|MWh?|KVA)(?![a-z])/]',
    message: 'units in names are spelt Kwh, Kw, Mwh, Kva (energyKwh, maxKw); quote a wire key that is spelt otherwise',
  },
];

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', 'test-artifacts/', '.tmp/', '.tmp-*/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'error',
      'no-restricted-imports': 'off',
      '@typescript-eslint/no-restricted-imports': ['error', { patterns: [runtimeInternals] }],
      'no-restricted-syntax': ['error', ...internalMembers, ...unitSpelling],
    },
  },
  {
    files: ['src/**', 'scripts/**'],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns: [runtimeInternals, packageInternals] }] },
  },
  {
    // The core is pure: no I/O, no clocks, no logger.
    files: ['src/core/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            // Which of our own modules core/ may import is dependency-cruiser's layer table (.dependency-cruiser.mjs).
            { group: ['node:*', 'fs', 'net', 'http', 'undici', 'mqtt', 'modbus-serial', 'better-sqlite3', 'pino'] },
            runtimeInternals,
            packageInternals,
          ],
        },
      ],
      'no-restricted-properties': ['error', { object: 'Date', property: 'now', message: 'core takes time as an argument' }],
      'no-restricted-syntax': [
        'error',
        { selector: "NewExpression[callee.name='Date'][arguments.length=0]", message: 'core takes time as an argument' },
        ...internalMembers,
        ...unitSpelling,
      ],
    },
  },
  {
    // Command-line entry points and scripts print to the terminal by design.
    files: ['src/main.ts', 'src/cli/**/*.ts', 'scripts/**', 'bench/**'],
    rules: { 'no-console': 'off' },
  },
);
