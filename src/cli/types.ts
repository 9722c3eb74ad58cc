/**
 * A CLI command. Adding one is: create `src/cli/<name>.ts` exporting a `CliCommand`, and add
 * it to the list in `src/cli/registry.ts`.
 */
import type { ParseArgsConfig } from 'node:util';

export type OptionSpecs = NonNullable<ParseArgsConfig['options']>;

/** What a command may touch: output, environment and the process (for signals). */
export interface CliIo {
  stdout(line: string): void;
  stderr(line: string): void;
  env: NodeJS.ProcessEnv;
  /** Emits SIGTERM/SIGINT; `process` in production. */
  signals: Pick<NodeJS.Process, 'on' | 'off'>;
}

export interface CommandArgs {
  /** Parsed options (by node:util parseArgs). */
  values: Record<string, string | boolean | (string | boolean)[] | undefined>;
  positionals: string[];
}

/** A command without its work: the name, the help and the options. */
export type CommandInfo = Omit<CliCommand, 'run'>;

export interface CliCommand {
  name: string;
  /** One line for `wattshift --help`. */
  summary: string;
  /** Usage after `wattshift <name>`, e.g. `--config FILE`. */
  usage: string;
  options: OptionSpecs;
  /** Extra lines for `wattshift <name> --help`. */
  help?: string[];
  allowPositionals?: boolean;
  /** Returns the process exit code. */
  run(args: CommandArgs, io: CliIo): Promise<number>;
}
