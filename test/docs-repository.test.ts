/**
 * The repository's own documents: the README speaks to users and names only commands that exist,
 * the architecture page names every source folder, links lead to files that are there, and no
 * document carries development history.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { commands } from '../src/cli/registry.js';

const read = (path: string): string => readFileSync(path, 'utf8');
const documents = [
  'README.md',
  'DEVELOPING.md',
  'CHANGELOG.md',
  'AGENTS.md',
  ...readdirSync('docs')
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

describe('the README', () => {
  const readme = read('README.md');

  it('stays short enough to read', () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(160);
  });

  it('names only commands that exist', () => {
    const known = new Set(commands.map((c) => c.name));
    const named = [...readme.matchAll(/`(?:sudo )?wattshift ([a-z][a-z-]*)/g)].map((m) => m[1]!);
    expect(named.length).toBeGreaterThan(5);
    expect(named.filter((n) => !known.has(n))).toEqual([]);
  });

  it('carries the demo and the test commands', () => {
    expect(readme).toContain('npm ci && npm run demo');
    expect(readme).toMatch(/apt-get install -y [^\n]*&& npm ci && npm test/);
  });
});

describe('docs/architecture.md', () => {
  it('names every folder of src/ in its source layout', () => {
    const layout = /## Source layout[\s\S]*?```([\s\S]*?)```/.exec(read('docs/architecture.md'))?.[1] ?? '';
    const folders = readdirSync('src').filter((f) => statSync(join('src', f)).isDirectory());
    expect(folders.length).toBeGreaterThan(10);
    expect(folders.filter((f) => !new RegExp(`(^|[\\s,])${f}/`, 'm').test(layout))).toEqual([]);
  });
});

describe('the documents', () => {
  it('link only to files that exist', () => {
    const broken: string[] = [];
    for (const doc of documents) {
      for (const m of read(doc).matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
        const target = m[1]!;
        if (/^[a-z]+:/.test(target)) continue;
        if (!existsSync(join(dirname(doc), target))) broken.push(`${doc} → ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('tell what is, not how it came to be', () => {
    const history = [/\bissue (?:#)?\d+/i, /\bsession \d+/i, /\bDESIGN\.md\b/, /\bwent from\b/i, /\buntil session\b/i, /\bbefore this session\b/i];
    const found = documents.flatMap((doc) =>
      read(doc)
        .split('\n')
        .flatMap((line, i) => (history.some((re) => re.test(line)) ? [`${doc}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(found).toEqual([]);
  });
});
