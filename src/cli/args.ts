import type { CliIo, CommandArgs } from './types.js';

/** The `--config` value, or null after printing the usage (the caller returns exit 2). */
export function configPathOf(args: CommandArgs, io: CliIo, command: string): string | null {
  const path = args.values.config;
  if (typeof path === 'string' && path !== '') return path;
  io.stderr(`wattshift ${command}: --config FILE is required`);
  return null;
}
