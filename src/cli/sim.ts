/** `wattshift sim tank|goe|shelly|tasmota|ams|ocpp|heatpump`: runs one simulated device until SIGINT/SIGTERM. */
import { isWattshiftError } from '../errors.js';
import { exitCodes } from './exit-codes.js';
import type { CliCommand } from './types.js';
import { untilSignal } from './until-signal.js';
import type { SimKind } from '../sandbox/devices/sim-cli.js';

const kinds: readonly SimKind[] = ['tank', 'goe', 'shelly', 'tasmota', 'ams', 'ocpp', 'heatpump'];

export const simCommand: CliCommand = {
  name: 'sim',
  summary: 'run a simulated device (tank on Modbus TCP, go-e charger, Shelly or HAN meter on MQTT, OCPP charger) to try without hardware',
  usage:
    'tank|goe|shelly|tasmota|ams|ocpp|heatpump [--port N] [--mqtt URL] [--prefix TOPIC] [--charger TOPIC] [--url WS-URL] [--password P] [--speed X]',
  allowPositionals: true,
  options: {
    port: { type: 'string' },
    mqtt: { type: 'string' },
    prefix: { type: 'string' },
    charger: { type: 'string' },
    speed: { type: 'string' },
    url: { type: 'string' },
    password: { type: 'string' },
  },
  help: [
    'tank: a Modbus TCP water heater (profile wattshift-sim-tank) on --port (default 5020).',
    'heatpump: an SG Ready heat pump water heater behind a two-relay Modbus TCP board (profile wattshift-sim-heat-pump) on --port.',
    'goe, shelly: publish on the broker --mqtt (default mqtt://127.0.0.1:1883) like the real devices.',
    'ams: an AMS reader on a HAN meter, publishing on --mqtt at the topic --prefix (default ams/sim001); its meter also counts',
    '  the go-e chargers on that broker under --charger (default go-eCharger/+, where `wattshift sim goe` publishes).',
    "ocpp: an OCPP 1.6J charge point (id --prefix, default cp-sim001) connecting to wattshift's central system",
    '  at --url (default ws://127.0.0.1:8887/ocpp) with --password (default wattshift-sim-password).',
    'Prints the config lines that point wattshift at the device. --speed runs its time faster (default 1).',
  ],
  async run(args, io) {
    const kind = args.positionals[0];
    if (kind === undefined || !(kinds as readonly string[]).includes(kind) || args.positionals.length > 1) {
      io.stderr(`usage: wattshift sim ${simCommand.usage}`);
      return exitCodes.usage;
    }
    const text = (name: string): string | undefined => (typeof args.values[name] === 'string' ? (args.values[name] as string) : undefined);
    const prefix = text('prefix');
    const charger = text('charger');
    try {
      // Loaded on demand, so `wattshift run` does not carry the simulators in memory.
      const { runSimulator } = await import('../sandbox/devices/sim-cli.js');
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
  },
};
