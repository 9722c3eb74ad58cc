/** The daemon's runtime dependencies hold only what `wattshift run` needs. */
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { expect, it } from 'vitest';
import { repoRoot } from './helpers/daemon-harness.js';

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

it("keeps aedes (the demo's broker) out of the runtime dependencies and out of everything but the demo", () => {
  const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
    devDependencies: Record<string, string>;
  };
  expect(Object.keys(pkg.dependencies)).not.toContain('aedes');
  expect(Object.keys(pkg.devDependencies)).toContain('aedes');
  const importers = sources(join(repoRoot, 'src'))
    .filter((f) => /from 'aedes'/.test(readFileSync(f, 'utf8')))
    .map((f) => relative(repoRoot, f));
  expect(importers).toEqual(['src/demo/broker.ts']);
});
