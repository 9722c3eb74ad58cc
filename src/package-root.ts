/**
 * The directory holding wattshift's package.json: the checkout when run from `src/` (tsx, tests),
 * the install prefix when run from the bundle in `dist/`. Built-in data (`profiles/`) and the
 * version live there; the bundle keeps no copies of them.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WattshiftError } from './errors.js';

let found: string | undefined;

/** Walks up from `start` to the first directory whose package.json names wattshift. */
export function findPackageRoot(start: string): string | undefined {
  for (let dir = start; ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && isWattshiftManifest(manifest)) return dir;
    if (dirname(dir) === dir) return undefined;
  }
}

function isWattshiftManifest(path: string): boolean {
  try {
    return (JSON.parse(readFileSync(path, 'utf8')) as { name?: unknown }).name === 'wattshift';
  } catch {
    return false;
  }
}

export function packageRoot(): string {
  found ??= findPackageRoot(dirname(fileURLToPath(import.meta.url)));
  if (found === undefined)
    throw new WattshiftError('INTERNAL', `broken install: wattshift's package.json not found above ${fileURLToPath(import.meta.url)}; reinstall`);
  return found;
}

/** The package version, from the package's package.json. */
export function packageVersion(): string {
  const raw = readFileSync(join(packageRoot(), 'package.json'), 'utf8');
  return (JSON.parse(raw) as { version: string }).version;
}
