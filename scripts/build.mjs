// Builds the three products into dist/, each an ES-module bundle of its own with chunks that only
// some commands load (the Modbus stack, ...):
//   dist/main.js   the gateway: the `wattshift` command and the daemon (and dist/jobs/plan-worker-thread.js)
//   dist/hub.js    the partner's fleet hub, `wattshift hub` (chunks/hub-*)
//   dist/sim.js    the sandbox, simulators and demo, `wattshift sandbox|sim|demo` (chunks/sim-*)
// The gateway's command loads the other two only when one of their commands runs (src/cli/parts.ts);
// none of their code is in the gateway's bundle, so a package may leave them out. Why a bundle and not tsc's file-per-module
// output: Node keeps the source text of every loaded module on its heap, two bytes per character
// when a file has any non-Latin-1 character (zod's do). Bundled, minified and ASCII-escaped, the
// daemon takes ~4 MB less RSS. Names are kept, so stack traces stay readable; the
// source map beside each file maps them back to src/ (node --enable-source-maps).
//
//   node scripts/build.mjs [--outdir DIR]   (DIR must sit inside the package, which holds profiles/)
import { rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import process from 'node:process';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Packages with native addons stay in node_modules: they find their .node files relative to themselves. */
export const external = ['better-sqlite3', '@serialport/bindings-cpp'];

/**
 * zod's message catalogues in 40 languages, of which the daemon uses English (zod's default):
 * its `locales` namespace is reduced to `en`, 275 kB less code on the heap. Fails the build if
 * zod moves the file, rather than silently shipping all of them again.
 */
const zodEnglishOnly = {
  name: 'zod-english-only',
  setup(b) {
    let replaced = 0;
    b.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) => {
      if (!/\/node_modules\/zod\/v4\/(core\/index|classic\/external)\.js$/.test(args.importer.replaceAll('\\', '/'))) return undefined;
      replaced += 1;
      return { path: join(dirname(args.importer), '..', 'locales', 'en.js'), namespace: 'zod-english-only' };
    });
    b.onLoad({ filter: /.*/, namespace: 'zod-english-only' }, (args) => ({
      contents: `export { default as en } from ${JSON.stringify(args.path)};`,
      resolveDir: dirname(args.path),
    }));
    b.onEnd((result) => {
      if (result.errors.length === 0 && replaced === 0)
        throw new Error("zod-english-only: zod's locales index was not found; update scripts/build.mjs");
    });
  },
};

/**
 * The two imports in src/cli/parts.ts of the other products' entries stay imports, of their
 * bundles beside main.js, instead of pulling their code in. Fails the build if they are not found.
 */
const partsApart = {
  name: 'parts-apart',
  setup(b) {
    let found = 0;
    b.onResolve({ filter: /^\.\/(hub|sim)-part\.js$/ }, (args) => {
      if (!args.importer.replaceAll('\\', '/').endsWith('/src/cli/parts.ts')) return undefined;
      found += 1;
      return { path: `./${args.path.slice(2, -'-part.js'.length)}.js`, external: true };
    });
    b.onEnd((result) => {
      if (result.errors.length === 0 && found === 0)
        throw new Error('parts-apart: the imports of src/cli/parts.ts were not found; update scripts/build.mjs');
    });
  },
};

/** Each product's entries, the names of its chunks and its plugins. */
export const products = {
  // The planner's worker thread is its own entry: dist/jobs/plan-worker-thread.js (src/jobs/plan-worker.ts finds it).
  gateway: {
    entryPoints: { main: 'src/main.ts', 'jobs/plan-worker-thread': 'src/jobs/plan-worker-thread.ts' },
    chunks: 'chunks/[name]-[hash]',
    plugins: [zodEnglishOnly, partsApart],
  },
  hub: { entryPoints: { hub: 'src/cli/hub-part.ts' }, chunks: 'chunks/hub-[name]-[hash]', plugins: [zodEnglishOnly] },
  sim: { entryPoints: { sim: 'src/cli/sim-part.ts' }, chunks: 'chunks/sim-[name]-[hash]', plugins: [zodEnglishOnly] },
};

/** Builds one product into `outdir`; its metafile names the source files in each output. */
function buildProduct({ entryPoints, chunks, plugins }, outdir) {
  return build({
    absWorkingDir: root,
    entryPoints,
    outdir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20.18',
    chunkNames: chunks,
    external,
    plugins,
    minifyWhitespace: true,
    minifySyntax: true,
    sourcemap: 'linked',
    legalComments: 'linked',
    metafile: true,
    // Bundled CommonJS code calls require() for Node's own modules; an ES module has none.
    banner: { js: "import { createRequire as __wattshiftRequire } from 'node:module'; const require = __wattshiftRequire(import.meta.url);" },
    logLevel: 'warning',
  });
}

/** Builds the three products into `outdir` (emptied first); resolves with each one's esbuild result. */
export async function buildBundle(outdir = join(root, 'dist')) {
  rmSync(outdir, { recursive: true, force: true });
  // One after the other: esbuild's writes of two builds into one folder at once can fail.
  const gateway = await buildProduct(products.gateway, outdir);
  const hub = await buildProduct(products.hub, outdir);
  const sim = await buildProduct(products.sim, outdir);
  return { gateway, hub, sim };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { values } = parseArgs({ options: { outdir: { type: 'string' } } });
  await buildBundle(values.outdir ? resolve(values.outdir) : undefined);
}
