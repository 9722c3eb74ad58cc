// Builds the daemon into dist/: one ES-module bundle (dist/main.js) plus chunks that only some
// commands load (demo, sandbox, the Modbus stack). Why a bundle and not tsc's file-per-module
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

export async function buildBundle(outdir = join(root, 'dist')) {
  rmSync(outdir, { recursive: true, force: true });
  return build({
    absWorkingDir: root,
    // The planner's worker thread is its own entry: dist/jobs/plan-worker-thread.js (src/jobs/plan-worker.ts finds it).
    entryPoints: ['src/main.ts', 'src/jobs/plan-worker-thread.ts'],
    outdir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20.18',
    chunkNames: 'chunks/[name]-[hash]',
    external,
    plugins: [zodEnglishOnly],
    minifyWhitespace: true,
    minifySyntax: true,
    sourcemap: 'linked',
    legalComments: 'linked',
    // Bundled CommonJS code calls require() for Node's own modules; an ES module has none.
    banner: { js: "import { createRequire as __wattshiftRequire } from 'node:module'; const require = __wattshiftRequire(import.meta.url);" },
    logLevel: 'warning',
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { values } = parseArgs({ options: { outdir: { type: 'string' } } });
  await buildBundle(values.outdir ? resolve(values.outdir) : undefined);
}
