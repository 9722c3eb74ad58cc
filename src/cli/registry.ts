/**
 * Every CLI command. Add a command: write `src/cli/<name>.ts` and add it here. The hub's and the
 * simulation's commands run in bundles of their own (parts.ts); their files here hold only the help.
 */
import { checkCommand } from './check.js';
import { demoCommand } from './demo.js';
import { hubCommand } from './hub.js';
import { inPart } from './parts.js';
import { planCommand } from './plan.js';
import { probeCommand } from './probe.js';
import { registerCommand } from './register.js';
import { runCommand } from './run.js';
import { sandboxCommand } from './sandbox.js';
import { simCommand } from './sim.js';
import { statusCommand } from './status.js';
import type { CliCommand } from './types.js';
import { versionCommand } from './version.js';

export const commands: readonly CliCommand[] = [
  runCommand,
  checkCommand,
  registerCommand,
  statusCommand,
  planCommand,
  probeCommand,
  inPart('sim', sandboxCommand),
  inPart('hub', hubCommand),
  inPart('sim', simCommand),
  inPart('sim', demoCommand),
  versionCommand,
];
