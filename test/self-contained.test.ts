import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The repository stands on its own: a user's clone has nothing beside it, so no tracked file may
 * read, import or link to a path outside the repository.
 */
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

function trackedFiles(): string[] {
  const out = execFileSync('git', ['ls-files', '-z'], { cwd: repoRoot, encoding: 'utf8' });
  return out.split('\0').filter((f) => f !== '' && existsSync(join(repoRoot, f)));
}

const textFile = /\.(ts|mts|mjs|js|cjs|json|ya?ml|md|sh|service|txt|toml)$|(^|\/)(run|[^./]+)$/;
const isInside = (abs: string): boolean => abs === repoRoot || abs.startsWith(repoRoot + sep);

/** Paths that name the reading material kept beside the checkout by the people who build it. */
const outsideNames = /\.\.\/shared\b|(^|[\s`'"(])shared\/(spec|data|research|DESIGN)/;

/** Relative string literals in code, with where they resolve from the file's own folder. */
function escapingLiterals(file: string, text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(/['"`]((?:\.\.\/)+[^'"`$\s]*)['"`]/g)) {
    const literal = m[1] as string;
    if (!isInside(resolve(repoRoot, dirname(file), literal))) found.push(literal);
  }
  return found;
}

/** Relative link targets in Markdown (`[text](target)`), without anchors. */
function markdownTargets(text: string): string[] {
  const targets: string[] = [];
  for (const m of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    const target = m[1] as string;
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('#')) continue;
    targets.push(target.split('#')[0] as string);
  }
  return targets;
}

describe('the repository stands on its own', () => {
  const files = trackedFiles().filter((f) => textFile.test(f) && f !== 'package-lock.json');

  it('tracks the vendored contract, webhook samples and price data it uses', () => {
    for (const f of [
      'spec/ec-sandbox-swagger.json',
      'spec/webhook-server-openapi.yaml',
      'spec/LICENSE',
      'spec/README.md',
      'spec/webhook-test-data/signing-key.txt',
      'data/prices/README.md',
      'docs/architecture.md',
      'docs/sandbox.md',
    ]) {
      expect(files, f).toContain(f);
    }
  });

  it('no tracked file names the reading material outside the repository', () => {
    // This file's own samples name the folder on purpose.
    const offenders = files.filter((f) => f !== 'test/self-contained.test.ts' && outsideNames.test(readFileSync(join(repoRoot, f), 'utf8')));
    expect(offenders).toEqual([]);
  });

  it('no relative path in code resolves outside the repository', () => {
    const offenders = files
      // eslint's import patterns are globs, and this file's own samples are meant to escape.
      .filter((f) => /\.(ts|mts|mjs|js|cjs)$/.test(f) && f !== 'eslint.config.js' && f !== 'test/self-contained.test.ts')
      .flatMap((f) => escapingLiterals(f, readFileSync(join(repoRoot, f), 'utf8')).map((l) => `${f}: ${l}`));
    expect(offenders).toEqual([]);
  });

  it('every relative link in the Markdown files resolves to a tracked path inside the repository', () => {
    const tracked = new Set(trackedFiles());
    const trackedDirs = new Set(
      [...tracked].flatMap((f) =>
        f
          .split('/')
          .slice(0, -1)
          .map((_, i, parts) => parts.slice(0, i + 1).join('/')),
      ),
    );
    const broken: string[] = [];
    for (const md of files.filter((f) => f.endsWith('.md'))) {
      for (const target of markdownTargets(readFileSync(join(repoRoot, md), 'utf8'))) {
        if (target === '') continue;
        const abs = resolve(repoRoot, dirname(md), target);
        const rel = relative(repoRoot, abs).split(sep).join('/').replace(/\/$/, '');
        if (!isInside(abs) || !(tracked.has(rel) || trackedDirs.has(rel))) broken.push(`${md} -> ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('the checks catch what they look for', () => {
    // Built, not written out, so that this file does not itself name the outside folder.
    const outside = `${'../'.repeat(2)}${'sha'}red/spec/a.json`;
    expect(escapingLiterals('test/x.test.ts', `new URL('${outside}', import.meta.url)`)).toEqual([outside]);
    expect(outsideNames.test(`read ${outside.slice(3)}`)).toBe(true);
    expect(escapingLiterals('test/x.test.ts', "import { a } from '../src/a.js';")).toEqual([]);
    expect(outsideNames.test('see `shared/spec/volue/x.json`')).toBe(true);
    expect(outsideNames.test('a shared connection')).toBe(false);
    expect(markdownTargets('[a](docs/x.md#y) [b](https://e.org) [c](#top) [d](../../z.md)')).toEqual(['docs/x.md', '../../z.md']);
  });
});
