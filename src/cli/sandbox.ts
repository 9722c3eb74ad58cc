/**
 * `wattshift sandbox`: runs the local Energy Coordination API simulator until SIGINT/SIGTERM.
 * The work is in sandbox-run.ts, in the simulation's bundle (wired in registry.ts through parts.ts).
 */
import type { CommandInfo } from './types.js';

const flags = ['port', 'host', 'seed', 'speed', 'client-id', 'client-secret'] as const;

export const sandboxCommand: CommandInfo = {
  name: 'sandbox',
  summary: 'run the local simulator of the Energy Coordination API, forecast service and token endpoint',
  usage: '[--port N] [--host H] [--seed S] [--speed X] [--client-id ID --client-secret S]',
  options: Object.fromEntries(flags.map((f) => [f, { type: 'string' as const }])),
  help: [
    'Prints its URLs and the accepted credentials (default wattshift-local / local-secret),',
    'then serves until SIGINT or SIGTERM. --speed runs its clock faster than real time.',
  ],
};
