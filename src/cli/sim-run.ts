/** The work of `wattshift sim` (see sim.ts beside it), in the simulation's bundle. */
import { isWattshiftError } from '../errors.js';
import { runSimulator, type SimKind } from '../sandbox/devices/sim-cli.js';
import { exitCodes } from './exit-codes.js';
import { simCommand } from './sim.js';
import type { CliIo, CommandArgs } from './types.js';
import { untilSignal } from './until-signal.js';

const kinds: readonly SimKind[] = ['tank', 'goe', 'shelly', 'tasmota', 'ams', 'ocpp', 'heatpump', 'solar'];

export async function runSimCommand(args: CommandArgs, io: CliIo): Promise<number> {
  const kind = args.positionals[0];
  if (kind === undefined || !(kinds as readonly string[]).includes(kind) || args.positionals.length > 1) {
    io.stderr(`usage: wattshift sim ${simCommand.usage}`);
    return exitCodes.usage;
  }
  const text = (name: string): string | undefined => (typeof args.values[name] === 'string' ? (args.values[name] as string) : undefined);
  const prefix = text('prefix');
  const charger = text('charger');
  try {
    await untilSignal(io, (signal) =>
      runSimulator(
        {
          kind: kind as SimKind,
          port: Number(text('port') ?? 5020),
          mqttUrl: text('mqtt') ?? 'mqtt://127.0.0.1:1883',
          speed: Number(text('speed') ?? 1),
          ocppUrl: text('url') ?? 'ws://127.0.0.1:8887/ocpp',
          password: text('password') ?? 'wattshift-sim-password',
          ...(prefix ? { prefix } : {}),
          ...(charger ? { chargers: charger } : {}),
        },
        io.stdout,
        signal,
      ),
    );
    return exitCodes.ok;
  } catch (err) {
    if (isWattshiftError(err, 'CONFIG_INVALID')) {
      io.stderr(`wattshift sim: ${err.message}`);
      return exitCodes.usage;
    }
    throw err;
  }
}
