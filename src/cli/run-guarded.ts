/** Runs a command's work and turns what it throws into lines on stderr and an exit code. */
import { exitCodeFor } from './exit-codes.js';
import { formatError } from './format-error.js';
import type { CliIo } from './types.js';

/**
 * Each bundle (the gateway's, the hub's, the simulation's) calls its own copy, so what a part
 * throws is recognised by that part's own error class.
 */
export async function runGuarded(io: CliIo, work: () => Promise<number>): Promise<number> {
  try {
    return await work();
  } catch (err) {
    for (const line of formatError(err)) io.stderr(line);
    return exitCodeFor(err);
  }
}
