/** Every CLI command. Add a command: write `src/cli/<name>.ts` and add it here. */
import { checkCommand } from './check.js';
import { runCommand } from './run.js';
import type { CliCommand } from './types.js';
import { versionCommand } from './version.js';

export const commands: readonly CliCommand[] = [
  runCommand,
  checkCommand,
  versionCommand,
];
