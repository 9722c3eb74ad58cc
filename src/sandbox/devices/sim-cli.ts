/**
 * `wattshift sim tank|goe|shelly`: one simulated device for installers who want to try wattshift
 * without hardware. The tank is a Modbus TCP server (profile `wattshift-sim-tank`); the go-e charger
 * (with a car plugged in) and the Shelly relay publish on an MQTT broker, as the real ones do.
 * Each prints the config lines that point wattshift at it, then runs until the signal aborts.
 */
import { acceleratedClock } from '../../clock.js';
import { WattshiftError } from '../../errors.js';
import { createGoeSim } from './goe-sim.js';
import { startSimulatedTank } from './modbus-tank.js';
import { followClock, type MqttSimulator } from './mqtt-simulator.js';
import { createShellySim } from './shelly-sim.js';

export type SimKind = 'tank' | 'goe' | 'shelly';

export interface SimOptions {
  kind: SimKind;
  /** Modbus TCP port of the tank (0 picks a free one). */
  port: number;
  /** Broker of the MQTT devices. */
  mqttUrl: string;
  /** Topic prefix of the MQTT device. */
  prefix?: string;
  /** Simulated time runs this many times faster than real time. */
  speed: number;
}

function checked(o: SimOptions): SimOptions {
  if (!Number.isInteger(o.port) || o.port < 0 || o.port > 65535) throw new WattshiftError('CONFIG_INVALID', `--port ${o.port} is not a TCP port`);
  if (!Number.isFinite(o.speed) || o.speed < 1 || o.speed > 100_000) throw new WattshiftError('CONFIG_INVALID', `--speed ${o.speed} must be between 1 and 100000`);
  return o;
}

async function runMqtt(sim: MqttSimulator, stepMs: number, speed: number, signal: AbortSignal): Promise<void> {
  await sim.start();
  try {
    await followClock(sim, acceleratedClock(sim.nowMs, speed), stepMs, signal);
  } finally {
    await sim.close();
  }
}

export async function runSimulator(options: SimOptions, out: (line: string) => void, signal: AbortSignal): Promise<void> {
  const o = checked(options);
  const startMs = Date.now();
  if (o.kind === 'tank') {
    const tank = await startSimulatedTank({ clock: acceleratedClock(startMs, o.speed), port: o.port, host: '0.0.0.0' });
    out(`simulated tank (Modbus TCP) listening on port ${tank.port}, unit ${tank.unitId}, ${o.speed}× real time; in the config:`);
    out(`  modbus: { sim: { type: tcp, host: <this machine>, port: ${tank.port} } }`);
    out('  switch: { type: modbus, bus: sim, unitId: 1, profile: wattshift-sim-tank }');
    out('  meter: { type: modbus, bus: sim, unitId: 1, profile: wattshift-sim-tank }');
    out('  thermometer: { type: modbus, bus: sim, unitId: 1, profile: wattshift-sim-tank, point: temperatureC }');
    await new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
    await tank.close();
    return;
  }
  if (o.kind === 'goe') {
    const prefix = o.prefix ?? 'go-eCharger/sim001';
    const sim = createGoeSim({ url: o.mqttUrl, topicPrefix: prefix, startMs, phases: 3, plugs: [{ atMs: startMs, battery: { capacityKwh: 60, socPct: 30, targetSocPct: 90 } }] });
    out(`simulated go-e charger on ${o.mqttUrl} under ${prefix}, a 60 kWh car plugged in at 30 %, ${o.speed}× real time; in the config:`);
    out(`  charger: { type: goe, topicPrefix: ${prefix} }`);
    await runMqtt(sim, 10_000, o.speed, signal);
    return;
  }
  const prefix = o.prefix ?? 'shellyplus1pm-sim001';
  const sim = createShellySim({ url: o.mqttUrl, topicPrefix: prefix, startMs, temperatureSensorId: 100 });
  out(`simulated Shelly Plus 1PM on a 200 l tank on ${o.mqttUrl} under ${prefix}, ${o.speed}× real time; in the config:`);
  out(`  switch: { type: shelly, topicPrefix: ${prefix}, switchId: 0, temperatureSensorId: 100 }`);
  await runMqtt(sim, 10_000, o.speed, signal);
}
