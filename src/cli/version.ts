import { packageVersion } from '../package-root.js';
import type { CliCommand } from './types.js';

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
