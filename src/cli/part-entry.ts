/** The entry of a part's bundle (parts.ts): runs its commands, each with the part's own error formatting. */
import { WattshiftError } from '../errors.js';
import { runGuarded } from './run-guarded.js';
import type { CliIo, CommandArgs } from './types.js';

/** What a part's bundle exports. */
export interface PartEntry {
  runPartCommand(name: string, args: CommandArgs, io: CliIo): Promise<number>;
}

export function partEntry(commands: Record<string, (args: CommandArgs, io: CliIo) => Promise<number>>): PartEntry {
  return {
    runPartCommand: (name, args, io) =>
      runGuarded(io, async () => {
        const run = commands[name];
        if (!run) throw new WattshiftError('INTERNAL', `no command ${name} in this part`);
        return run(args, io);
      }),
  };
}
