/** Every CLI command. Add a command: write `src/cli/<name>.ts` and add it here. */
import { checkCommand } from './check.js';
import { demoCommand } from './demo.js';
import { hubCommand } from './hub.js';
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
  sandboxCommand,
  hubCommand,
  simCommand,
  demoCommand,
  versionCommand,
];
