/** Parses argv and runs one command from the registry. */
import { parseArgs } from 'node:util';
import { exitCodes } from './exit-codes.js';
import { commands as registered } from './registry.js';
import { runGuarded } from './run-guarded.js';
import type { CliCommand, CliIo } from './types.js';
import { packageVersion } from '../package-root.js';

export function renderHelp(commands: readonly CliCommand[]): string[] {
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    `wattshift ${packageVersion()}: home-energy controller for the Energy Coordination API`,
    '',
    'Usage: wattshift <command> [options]',
    '',
    'Commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    "Run `wattshift <command> --help` for a command's options.",
    'Exit codes: 0 ok, 1 runtime failure, 2 usage, 78 invalid config or rejected credentials.',
  ];
}

function renderCommandHelp(c: CliCommand): string[] {
  const opts = Object.entries(c.options).map(([name, o]) => `  --${name}${o.type === 'string' ? ' VALUE' : ''}${o.short ? `, -${o.short}` : ''}`);
  return [
    `Usage: wattshift ${c.name}${c.usage ? ` ${c.usage}` : ''}`,
    '',
    c.summary,
    ...(c.help ? ['', ...c.help] : []),
    ...(opts.length ? ['', 'Options:', ...opts] : []),
  ];
}

/** Runs the CLI; resolves with the exit code. */
export async function runCli(argv: readonly string[], io: CliIo, commands: readonly CliCommand[] = registered): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    for (const line of renderHelp(commands)) io.stdout(line);
    return name === undefined ? exitCodes.usage : exitCodes.ok;
  }
  if (name === '--version' || name === '-V') return runCli(['version'], io, commands);
  const command = commands.find((c) => c.name === name);
  if (!command) {
    io.stderr(`wattshift: unknown command "${name}" (commands: ${commands.map((c) => c.name).join(', ')})`);
    return exitCodes.usage;
  }
  let parsed;
  try {
    parsed = parseArgs({
      args: [...rest],
      options: { ...command.options, help: { type: 'boolean', short: 'h' } },
      allowPositionals: command.allowPositionals ?? false,
      strict: true,
    });
  } catch (err) {
    io.stderr(`wattshift ${command.name}: ${err instanceof Error ? err.message : String(err)}`);
    io.stderr(`usage: wattshift ${command.name} ${command.usage}`);
    return exitCodes.usage;
  }
  if (parsed.values.help === true) {
    for (const line of renderCommandHelp(command)) io.stdout(line);
    return exitCodes.ok;
  }
  return runGuarded(io, () => command.run({ values: parsed.values, positionals: parsed.positionals }, io));
}
