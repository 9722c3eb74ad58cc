import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../package-root.js';
import type { CliCommand } from './types.js';

/** The package version, from the package's package.json. */
export function packageVersion(): string {
  const raw = readFileSync(join(packageRoot(), 'package.json'), 'utf8');
  return (JSON.parse(raw) as { version: string }).version;
}

export const versionCommand: CliCommand = {
  name: 'version',
  summary: 'print the wattshift and Node.js versions',
  usage: '',
  options: {},
  async run(_args, io) {
    io.stdout(`wattshift ${packageVersion()} (node ${process.versions.node})`);
    return 0;
  },
};
