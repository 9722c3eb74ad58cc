/** The work of `wattshift sandbox` (see sandbox.ts beside it), in the simulation's bundle. */
import { isWattshiftError } from '../errors.js';
import { runSandboxCommand as runSandbox } from '../sandbox/cli.js';
import { exitCodes } from './exit-codes.js';
import { sandboxCommand } from './sandbox.js';
import type { CliIo, CommandArgs } from './types.js';
import { untilSignal } from './until-signal.js';

export async function runSandboxCommand(args: CommandArgs, io: CliIo): Promise<number> {
  const argv: string[] = [];
  for (const f of Object.keys(sandboxCommand.options)) {
    const v = args.values[f];
    if (typeof v === 'string') argv.push(`--${f}`, v);
  }
  try {
    await untilSignal(io, (signal) => runSandbox(argv, io, signal));
    return exitCodes.ok;
  } catch (err) {
    // Bad option values are usage errors; anything else (port in use, ...) goes to the part's runGuarded.
    if (isWattshiftError(err, 'CONFIG_INVALID')) {
      io.stderr(`wattshift sandbox: ${err.message}`);
      io.stderr(`usage: wattshift sandbox ${sandboxCommand.usage}`);
      return exitCodes.usage;
    }
    throw err;
  }
}
