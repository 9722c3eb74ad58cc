/** `wattshift sandbox`: runs the local Energy Coordination API simulator until SIGINT/SIGTERM. */
import { isWattshiftError } from '../errors.js';
import { exitCodes } from './exit-codes.js';
import type { CliCommand } from './types.js';
import { untilSignal } from './until-signal.js';

const flags = ['port', 'host', 'seed', 'speed', 'client-id', 'client-secret'] as const;

export const sandboxCommand: CliCommand = {
  name: 'sandbox',
  summary: 'run the local simulator of the Energy Coordination API, forecast service and token endpoint',
  usage: '[--port N] [--host H] [--seed S] [--speed X] [--client-id ID --client-secret S]',
  options: Object.fromEntries(flags.map((f) => [f, { type: 'string' as const }])),
  help: [
    'Prints its URLs and the accepted credentials (default wattshift-local / local-secret),',
    'then serves until SIGINT or SIGTERM. --speed runs its clock faster than real time.',
  ],
  async run(args, io) {
    const argv: string[] = [];
    for (const f of flags) {
      const v = args.values[f];
      if (typeof v === 'string') argv.push(`--${f}`, v);
    }
    try {
      // Loaded on demand, so `wattshift run` does not carry the simulator in memory.
      const { runSandboxCommand } = await import('../sandbox/cli.js');
      await untilSignal(io, (signal) => runSandboxCommand(argv, io, signal));
      return exitCodes.ok;
    } catch (err) {
      // Bad option values are usage errors; anything else (port in use, ...) goes to the dispatcher.
      if (isWattshiftError(err, 'CONFIG_INVALID')) {
        io.stderr(`wattshift sandbox: ${err.message}`);
        io.stderr(`usage: wattshift sandbox ${sandboxCommand.usage}`);
        return exitCodes.usage;
      }
      throw err;
    }
  },
};
