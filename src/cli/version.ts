import { readFileSync } from 'node:fs';
import type { CliCommand } from './types.js';

/** The package version, read from package.json next to src/ or dist/. */
export function packageVersion(): string {
  const raw = readFileSync(new URL('../../package.json', import.meta.url), 'utf8');
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
