import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findPackageRoot, packageRoot } from '../src/package-root.js';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

function tree(manifests: Record<string, unknown>): string {
  const root = mkdtempSync(join(tmpdir(), 'wattshift-pkgroot-'));
  dirs.push(root);
  for (const [dir, manifest] of Object.entries(manifests)) {
    mkdirSync(join(root, dir), { recursive: true });
    writeFileSync(join(root, dir, 'package.json'), typeof manifest === 'string' ? manifest : JSON.stringify(manifest));
  }
  mkdirSync(join(root, 'app', 'dist', 'chunks'), { recursive: true });
  return root;
}

describe('findPackageRoot', () => {
  it("walks up past other packages' manifests and unreadable ones to wattshift's", () => {
    const root = tree({ app: { name: 'wattshift' }, 'app/dist': { name: 'other' }, 'app/dist/chunks': '{not json' });
    expect(findPackageRoot(join(root, 'app', 'dist', 'chunks'))).toBe(join(root, 'app'));
  });

  it('is undefined when no wattshift manifest is above', () => {
    const root = tree({ app: { name: 'other' } });
    expect(findPackageRoot(join(root, 'app', 'dist'))).toBeUndefined();
  });

  it('finds this checkout from the sources', () => {
    expect(packageRoot()).toBe(join(import.meta.dirname, '..'));
  });
});
