/**
 * `wattshift sim tank|goe|shelly|tasmota|ams|ocpp|heatpump|solar`: runs one simulated device until
 * SIGINT/SIGTERM. The work is in sim-run.ts, in the simulation's bundle (wired in registry.ts through parts.ts).
 */
import type { CommandInfo } from './types.js';

export const simCommand: CommandInfo = {
  name: 'sim',
  summary: 'run a simulated device (tank on Modbus TCP, go-e charger, Shelly or HAN meter on MQTT, OCPP charger) to try without hardware',
  usage:
    'tank|goe|shelly|tasmota|ams|ocpp|heatpump|solar [--port N] [--mqtt URL] [--prefix TOPIC] [--charger TOPIC] [--url WS-URL] [--password P] [--speed X]',
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
    'solar: a SunSpec PV inverter (models 1 and 103 at 40000) on Modbus TCP on --port, producing under a clear sky with clouds.',
    'goe, shelly: publish on the broker --mqtt (default mqtt://127.0.0.1:1883) like the real devices.',
    'ams: an AMS reader on a HAN meter, publishing on --mqtt at the topic --prefix (default ams/sim001); its meter also counts',
    '  the go-e chargers on that broker under --charger (default go-eCharger/+, where `wattshift sim goe` publishes).',
    "ocpp: an OCPP 1.6J charge point (id --prefix, default cp-sim001) connecting to wattshift's central system",
    '  at --url (default ws://127.0.0.1:8887/ocpp) with --password (default wattshift-sim-password).',
    'Prints the config lines that point wattshift at the device. --speed runs its time faster (default 1).',
  ],
};
