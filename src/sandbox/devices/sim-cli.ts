/**
 * `wattshift sim tank|goe|shelly|tasmota|ams|ocpp|heatpump|solar`: one simulated device for installers who want to
 * try wattshift without hardware. The tank is a Modbus TCP server (profile `wattshift-sim-tank`); the
 * go-e charger (with a car plugged in), the Shelly and Tasmota relays and the AMS reader on a HAN port publish on
 * an MQTT broker, as the real ones do; the OCPP charge point (a car plugged in) connects to
 * wattshift's central system. The AMS reader's meter also sees the simulated go-e chargers on its
 * broker, as a HAN meter sees the car charging behind it. Each prints the config lines that point
 * wattshift at it, then runs until the signal aborts.
 */
import { acceleratedClock, systemClock } from '../../clock.js';
import { WattshiftError } from '../../errors.js';
import { createGoeSim } from './goe-sim.js';
import { startSimulatedTank } from './modbus-tank.js';
import { startSgReadyHeatPump } from './sg-ready-heat-pump.js';
import { followClock, type MqttSimulator } from './mqtt-simulator.js';
import { createShellySim } from './shelly-sim.js';
import { createTasmotaSim } from './tasmota-sim.js';
import { createAmsReaderSim } from './amsreader-sim.js';
import { createOcppChargePointSim } from './ocpp-charge-point-sim.js';
import { startSunSpecInverter } from './sunspec-inverter-sim.js';

export type SimKind = 'tank' | 'goe' | 'shelly' | 'tasmota' | 'ams' | 'ocpp' | 'heatpump' | 'solar';

export interface SimOptions {
  kind: SimKind;
  /** Modbus TCP port of the tank (0 picks a free one). */
  port: number;
  /** Broker of the MQTT devices. */
  mqttUrl: string;
  /** Topic prefix of the MQTT device (the AMS reader's topic; the OCPP charge point's id). */
  prefix?: string;
  /** The AMS reader: the go-e chargers whose draw its meter sees, an MQTT filter of their topic prefixes. */
  chargers?: string;
  /** The central system the OCPP charge point connects to, `ws://host:port/path`. */
  ocppUrl: string;
  /** The OCPP charge point's basic-auth password (16–40 characters, as the config wants). */
  password: string;
  /** Simulated time runs this many times faster than real time. */
  speed: number;
}

function checked(o: SimOptions): SimOptions {
  if (!Number.isInteger(o.port) || o.port < 0 || o.port > 65535) throw new WattshiftError('CONFIG_INVALID', `--port ${o.port} is not a TCP port`);
  if (!Number.isFinite(o.speed) || o.speed < 1 || o.speed > 100_000)
    throw new WattshiftError('CONFIG_INVALID', `--speed ${o.speed} must be between 1 and 100000`);
  if (o.password.length < 16 || o.password.length > 40) throw new WattshiftError('CONFIG_INVALID', '--password must be 16 to 40 characters');
  if (!/^wss?:\/\//.test(o.ocppUrl)) throw new WattshiftError('CONFIG_INVALID', `--url ${o.ocppUrl} is not a ws:// or wss:// address`);
  return o;
}

const aborted = (signal: AbortSignal): Promise<void> =>
  new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));

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
    const p = tank.physics.params;
    out(
      `  model: { volumeL: ${p.volumeL}, elementKw: ${p.elementKw}, coldWaterC: ${p.coldC}, ambientC: ${p.ambientC}, lossWPerK: ${p.uaWPerK}, maxC: ${p.thermostatC} }`,
    );
    await aborted(signal);
    await tank.close();
    return;
  }
  if (o.kind === 'heatpump') {
    const pump = await startSgReadyHeatPump({ clock: acceleratedClock(startMs, o.speed), port: o.port, host: '0.0.0.0' });
    const at = 'type: modbus, bus: hp, unitId: 1, profile: wattshift-sim-heat-pump';
    out(
      `simulated SG Ready heat pump (two relays on Modbus TCP) listening on port ${pump.port}, unit ${pump.unitId}, ${o.speed}× real time; in the config:`,
    );
    out(`  modbus: { hp: { type: tcp, host: <this machine>, port: ${pump.port} } }`);
    out(`  contacts: { relay1: { ${at}, channel: 0 }, relay2: { ${at}, channel: 1 } }`);
    out(`  meter: { ${at}, point: energyKwh }`);
    out(`  thermometer: { ${at}, point: temperatureC }`);
    out('  model: { volumeL: 200, electricKw: 0.5, cop: 2.8, normalC: 50, boostC: 60, maxC: 65 }');
    await aborted(signal);
    await pump.close();
    return;
  }
  if (o.kind === 'solar') {
    const inverter = await startSunSpecInverter({ clock: acceleratedClock(startMs, o.speed), port: o.port, host: '0.0.0.0' });
    out(
      `simulated 6 kWp PV inverter (SunSpec models 1 and 103 at 40000, Modbus TCP) listening on port ${inverter.port}, unit ${inverter.unitId}, ${o.speed}× real time; in the config:`,
    );
    out(`  modbus: { pv: { type: tcp, host: <this machine>, port: ${inverter.port} } }`);
    out('  - { id: pv, kind: solar, source: { type: sunspec, bus: pv, unitId: 1 }, model: { peakKwp: 6 } }');
    await aborted(signal);
    await inverter.close();
    return;
  }
  if (o.kind === 'goe') {
    const prefix = o.prefix ?? 'go-eCharger/sim001';
    const sim = createGoeSim({
      url: o.mqttUrl,
      topicPrefix: prefix,
      startMs,
      phases: 3,
      plugs: [{ atMs: startMs, battery: { capacityKwh: 60, socPct: 30, targetSocPct: 90 } }],
    });
    out(`simulated go-e charger on ${o.mqttUrl} under ${prefix}, a 60 kWh car plugged in at 30 %, ${o.speed}× real time; in the config:`);
    out(`  charger: { type: goe, topicPrefix: ${prefix} }`);
    out("  # no meter line: the charger's own energy counter (eto) meters it");
    await runMqtt(sim, 10_000, o.speed, signal);
    return;
  }
  if (o.kind === 'ams') {
    const topic = o.prefix ?? 'ams/sim001';
    // A home of 1.5 kW with a 3 kW load on L1 for ten minutes of every hour.
    const load = (atMs: number): { importW: number; currentsA: number[] } => {
      const heavy = atMs % 3_600_000 < 600_000;
      const currentsA = [heavy ? 15.2 : 2.2, 2.2, 2.2];
      return { importW: currentsA.reduce((s, a) => s + a * 230, 0), currentsA };
    };
    // go-e's default topic prefix is go-eCharger/<serial>, as `wattshift sim goe` publishes.
    const chargers = o.chargers ?? 'go-eCharger/+';
    const sim = createAmsReaderSim({ url: o.mqttUrl, topic, startMs, load, importKwh: 12_000, chargers });
    out(
      `simulated AMS reader on a 3-phase HAN meter on ${o.mqttUrl} at ${topic} (list 2 every 10 s, list 3 hourly), ${o.speed}× real time; in the config:`,
    );
    out(`  meter: { type: amsreader, topic: ${topic} }`);
    out(`  # its meter also counts the go-e chargers publishing under ${chargers} on this broker (wattshift sim goe)`);
    await runMqtt(sim, 10_000, o.speed, signal);
    return;
  }
  if (o.kind === 'ocpp') {
    const identity = o.prefix ?? 'cp-sim001';
    const sim = createOcppChargePointSim({
      url: o.ocppUrl,
      identity,
      password: o.password,
      startMs,
      maxCurrentA: 16,
      plugs: [{ atMs: startMs, battery: { capacityKwh: 60, socPct: 30, targetSocPct: 90 } }],
    });
    out(
      `simulated OCPP 1.6J charge point ${identity} connecting to ${o.ocppUrl}, a 60 kWh car plugged in at 30 %, ${o.speed}× real time; in the config:`,
    );
    out(`  ocpp: { port: ${new URL(o.ocppUrl).port || 8887} }`);
    out(`  charger: { type: ocpp, chargePointId: ${identity}, password: ${o.password} }`);
    // The central system may not be up yet: try again until it is (the charge point then reconnects by itself).
    while (!signal.aborted) {
      try {
        await sim.start();
        break;
      } catch {
        out(`central system not reachable at ${o.ocppUrl}; trying again in 5 s`);
        await systemClock.sleep(5000, signal).catch(() => undefined);
      }
    }
    try {
      await followClock(sim, acceleratedClock(sim.nowMs, o.speed), 10_000, signal);
    } finally {
      await sim.close();
    }
    return;
  }
  if (o.kind === 'tasmota') {
    const topic = o.prefix ?? 'tasmota_sim001';
    const sim = createTasmotaSim({ url: o.mqttUrl, topic, startMs, telePeriodS: 60 });
    out(
      `simulated Tasmota relay with an energy monitor and a DS18B20 on a 200 l tank on ${o.mqttUrl} as ${topic} (TelePeriod 60), ${o.speed}× real time; in the config:`,
    );
    out(`  switch: { type: tasmota, topic: ${topic} }`);
    await runMqtt(sim, 10_000, o.speed, signal);
    return;
  }
  const prefix = o.prefix ?? 'shellyplus1pm-sim001';
  // "Generic status update over MQTT" (status_ntf) on, so a home-automation tool sees the status topics too.
  const sim = createShellySim({ url: o.mqttUrl, topicPrefix: prefix, startMs, temperatureSensorId: 100, statusNtf: true });
  out(
    `simulated Shelly Plus 1PM on a 200 l tank on ${o.mqttUrl} under ${prefix} (RPC notifications and status updates on), ${o.speed}× real time; in the config:`,
  );
  out(`  switch: { type: shelly, topicPrefix: ${prefix}, switchId: 0, temperatureSensorId: 100 }`);
  await runMqtt(sim, 10_000, o.speed, signal);
}
