/**
 * `wattshift probe --config FILE DEVICE`: builds one configured device, reads every value it
 * offers once (Modbus: every readable point of its profile; MQTT: each capability), prints a
 * table and closes everything. For set-up: wiring, unit ids, register maps, topics.
 */
import { dirname, resolve } from 'node:path';
import { systemClock } from '../clock.js';
import { loadConfig } from '../config/load.js';
import type { Config, DeviceConfig, ModbusSource } from '../config/schema.js';
import { isWattshiftError, WattshiftError } from '../errors.js';
import type { Logger } from '../log.js';
import { contactSourcesOf, sourcesOf } from '../devices/factory.js';
import { createModbusBuses, type ModbusBus } from '../devices/modbus/bus.js';
import { createModbusDevice } from '../devices/modbus/modbus-device.js';
import { loadProfile } from '../devices/modbus/profiles.js';
import { createMqttConnection, createMqttDevice, type MqttConnection, type MqttDevice, type MqttDeviceSource } from '../devices/mqtt/index.js';
import type { EvState } from '../ports.js';
import { exitCodes } from './exit-codes.js';
import { cliLogger } from './register.js';
import { configPathOf } from './args.js';
import type { CliCommand } from './types.js';

export interface ProbeValue {
  name: string;
  value?: number | boolean | string;
  unit?: string;
  /** Said instead of a value (e.g. a write-only capability). */
  note?: string;
  error?: { code: string; message: string };
}

export interface ProbeSection {
  /** E.g. `modbus sim unit 1 (wattshift-sim-tank)` or `goe go-eCharger/abc`. */
  source: string;
  roles: string[];
  values: ProbeValue[];
}

type Source =
  NonNullable<Extract<DeviceConfig, { kind: 'hotWaterTank' }>['meter']> | NonNullable<Extract<DeviceConfig, { kind: 'evCharger' }>['charger']>;

/** The sources of a device by role, one entry per distinct source (a Shelly in three roles is one). */
function distinctSources(d: DeviceConfig): { source: Source; roles: string[] }[] {
  const byRole: [string, Source][] = [...contactSourcesOf(d).map(([k, s]): [string, Source] => [`contact ${k}`, s]), ...sourcesOf(d)];
  const out = new Map<string, { source: Source; roles: string[] }>();
  for (const [role, s] of byRole) {
    const key = s.type === 'modbus' ? `${s.bus}/${s.unitId ?? 1}/${s.profile}/${s.channel ?? 0}` : JSON.stringify(s);
    const entry = out.get(key) ?? { source: s, roles: [] };
    entry.roles.push(role);
    out.set(key, entry);
  }
  return [...out.values()];
}

const errorOf = (err: unknown): { code: string; message: string } =>
  isWattshiftError(err) ? { code: err.code, message: err.message } : { code: 'INTERNAL', message: err instanceof Error ? err.message : String(err) };

/**
 * Reads once within `timeoutMs`. A pushed (MQTT) value may not have arrived yet: a retryable
 * failure is retried until the deadline, and the last error is returned.
 */
async function readWithin<T>(
  read: (signal: AbortSignal) => Promise<T>,
  timeoutMs: number,
): Promise<{ ok: true; value: T } | { ok: false; error: { code: string; message: string } }> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    const left = deadline - Date.now();
    if (left <= 0) break;
    try {
      return { ok: true, value: await read(AbortSignal.timeout(left)) };
    } catch (err) {
      last = err;
      if (!isWattshiftError(err) || !err.retryable) break;
    }
    await new Promise((r) => setTimeout(r, Math.min(250, Math.max(0, deadline - Date.now()))));
  }
  return { ok: false, error: last === undefined ? { code: 'DEVICE_TIMEOUT', message: `no value within ${timeoutMs} ms` } : errorOf(last) };
}

function evStateText(s: EvState): string {
  return `plugged ${s.plugged ? 'yes' : 'no'}, charging ${s.charging ? 'yes' : 'no'}${s.socPct !== undefined ? `, SoC ${s.socPct} %` : ''}`;
}

async function probeMqtt(device: MqttDevice, timeoutMs: number): Promise<ProbeValue[]> {
  const reads: [string, string, ((signal: AbortSignal) => Promise<number | string>) | undefined][] = [
    ['energy', 'kWh', device.energyMeter && ((s) => device.energyMeter!.readEnergyKwh(s))],
    ['power', 'W', device.powerMeter && ((s) => device.powerMeter!.readPowerW(s))],
    ['temperature', '°C', device.thermometer && ((s) => device.thermometer!.readTemperatureC(s))],
    ['ev state', '', device.evStateReader && (async (s) => evStateText(await device.evStateReader!.readEvState(s)))],
  ];
  const present = reads.filter((r): r is [string, string, (signal: AbortSignal) => Promise<number | string>] => r[2] !== undefined);
  const results = await Promise.all(present.map(([, , read]) => readWithin(read, timeoutMs)));
  const values: ProbeValue[] = present.map(([name, unit], i) => {
    const r = results[i]!;
    return r.ok ? { name, value: r.value, ...(unit ? { unit } : {}) } : { name, ...(unit ? { unit } : {}), error: r.error };
  });
  if (device.heaterSwitch) values.push({ name: 'heater switch', note: 'present (write only, not probed)' });
  if (device.chargeCurrentLimit) values.push({ name: 'current limit', note: 'present (write only, not probed)' });
  return values;
}

export interface ProbeDeps {
  logger: Logger;
  /** Relative profile paths resolve against it (the config file's directory). */
  baseDir?: string;
  timeoutMs?: number;
  /**
   * How long to wait for an MQTT device's first values, ms (default 15 s): such devices publish on
   * their own schedule (an AMS reader lists every 10 s, a Shelly on change or every 30 s).
   */
  pushedWaitMs?: number;
}

/** Probes one device of `config`; throws CONFIG_INVALID for an unknown id. */
export async function probeDevice(config: Config, deviceId: string, deps: ProbeDeps): Promise<ProbeSection[]> {
  const device = config.devices.find((d) => d.id === deviceId);
  if (!device) {
    const ids = config.devices.map((d) => d.id);
    throw new WattshiftError('CONFIG_INVALID', `unknown device "${deviceId}" (devices in the config: ${ids.length ? ids.join(', ') : 'none'})`);
  }
  const timeoutMs = deps.timeoutMs ?? 5_000;
  const sources = distinctSources(device);
  const busNames = [...new Set(sources.flatMap(({ source }) => (source.type === 'modbus' ? [source.bus] : [])))];
  const busConfigs = Object.fromEntries(
    busNames.map((n) => {
      const c = config.modbus[n];
      if (!c) throw new WattshiftError('CONFIG_INVALID', `devices.${device.id}: unknown modbus bus '${n}'`);
      return [n, c];
    }),
  );
  const buses: Map<string, ModbusBus> = createModbusBuses(busConfigs, { clock: systemClock, logger: deps.logger });
  let mqtt: MqttConnection | null = null;
  const mqttDevices: MqttDevice[] = [];
  try {
    const sections: ProbeSection[] = [];
    for (const { source, roles } of sources) {
      if (source.type === 'modbus') {
        const s = source as ModbusSource;
        const section: ProbeSection = { source: `modbus ${s.bus} unit ${s.unitId ?? 1} (${s.profile})`, roles, values: [] };
        sections.push(section);
        try {
          const md = createModbusDevice(s, {
            bus: buses.get(s.bus)!,
            profile: loadProfile(s.profile, deps.baseDir ? { baseDir: deps.baseDir } : {}),
            logger: deps.logger,
          });
          const points = await md.probe(AbortSignal.timeout(timeoutMs));
          for (const [name, p] of Object.entries(points)) {
            section.values.push({
              name,
              ...(p.value !== undefined ? { value: p.value } : {}),
              ...(p.unit ? { unit: p.unit } : {}),
              ...(p.error ? { error: p.error } : {}),
            });
          }
        } catch (err) {
          section.values.push({ name: 'profile', error: errorOf(err) });
        }
        continue;
      }
      if (source.type === 'ocpp') {
        // The charger connects to the daemon's central system; a probe has none to offer it.
        sections.push({
          source: `ocpp ${source.chargePointId}`,
          roles,
          values: [
            {
              name: 'central system',
              error: {
                code: 'DEVICE_UNREACHABLE',
                message: 'probe does not run the OCPP central system: an OCPP charger is seen by the running daemon (status page, logs)',
              },
            },
          ],
        });
        continue;
      }
      const label =
        source.type === 'tasmota' || source.type === 'amsreader'
          ? source.topic
          : source.type === 'mqtt'
            ? (source.stateTopic ?? 'map')
            : source.topicPrefix;
      const section: ProbeSection = { source: `${source.type} ${label}`, roles, values: [] };
      sections.push(section);
      if (!config.mqtt) {
        section.values.push({ name: 'broker', error: { code: 'CONFIG_INVALID', message: 'an MQTT source needs the mqtt section' } });
        continue;
      }
      if (!mqtt) {
        const m = config.mqtt;
        // Its own client id: reusing the daemon's would disconnect a running daemon from the broker.
        mqtt = createMqttConnection(
          {
            url: m.url,
            clientId: `${m.clientId}-probe-${process.pid}`,
            rejectUnauthorized: m.rejectUnauthorized,
            connectTimeoutMs: timeoutMs,
            ...(m.username ? { username: m.username } : {}),
            ...(m.password ? { password: m.password } : {}),
            ...(m.ca ? { caFile: m.ca } : {}),
            ...(m.cert ? { certFile: m.cert } : {}),
            ...(m.key ? { keyFile: m.key } : {}),
          },
          { logger: deps.logger },
        );
      }
      const connected = await mqtt.waitConnected(AbortSignal.timeout(timeoutMs)).then(
        () => null,
        (err: unknown) => err,
      );
      if (connected !== null) {
        const e = errorOf(connected);
        section.values.push({
          name: 'broker',
          error:
            e.code === 'INTERNAL' || e.message.includes('abort')
              ? { code: 'MQTT_UNAVAILABLE', message: `no connection to ${config.mqtt.url} within ${timeoutMs} ms` }
              : e,
        });
        continue;
      }
      const md = createMqttDevice(
        source as MqttDeviceSource,
        { connection: mqtt, clock: systemClock, logger: deps.logger },
        { id: device.id, staleAfterS: device.staleAfterS, requestTimeoutMs: timeoutMs },
      );
      mqttDevices.push(md);
      section.values.push(...(await probeMqtt(md, deps.pushedWaitMs ?? Math.max(timeoutMs, 15_000))));
    }
    return sections;
  } finally {
    for (const d of mqttDevices) d.close();
    await Promise.allSettled([...[...buses.values()].map((b) => b.close()), ...(mqtt ? [(mqtt as MqttConnection).close()] : [])]);
  }
}

function valueText(v: ProbeValue): string {
  if (v.error) return `error ${v.error.code}: ${v.error.message}`;
  if (v.value === undefined) return v.note ?? '–';
  const value = typeof v.value === 'number' ? String(Math.round(v.value * 1000) / 1000) : String(v.value);
  return `${value}${v.unit ? ` ${v.unit}` : ''}`;
}

export function renderProbe(device: DeviceConfig, sections: readonly ProbeSection[]): string[] {
  const out = [`${device.name ?? device.id} (${device.id}, ${device.kind})`];
  if (sections.length === 0) out.push('  no sources configured');
  for (const s of sections) {
    out.push(`  ${s.source} as ${s.roles.join(', ')}`);
    const w = Math.max(8, ...s.values.map((v) => v.name.length));
    for (const v of s.values) out.push(`    ${v.name.padEnd(w)}  ${valueText(v)}`);
  }
  return out;
}

export const probeCommand: CliCommand = {
  name: 'probe',
  summary: 'read and print the live values of one device (for set-up)',
  usage: '--config FILE DEVICE',
  options: { config: { type: 'string', short: 'c' } },
  allowPositionals: true,
  help: [
    'Reads every readable value once, each within 5 s; writes nothing.',
    'Exit codes: 0 at least one value read, 1 nothing could be read, 78 invalid config or unknown device.',
  ],
  async run(args, io) {
    const path = configPathOf(args, io, 'probe');
    if (path === null) return exitCodes.usage;
    const [deviceId, ...extra] = args.positionals;
    if (deviceId === undefined || extra.length > 0) {
      io.stderr('wattshift probe: give exactly one DEVICE id');
      io.stderr('usage: wattshift probe --config FILE DEVICE');
      return exitCodes.usage;
    }
    // The API secret is not needed; an unreadable MQTT password shows as the broker's refusal.
    // Config warnings are `wattshift check`'s business.
    const { config, secrets } = loadConfig(path, io.env, { deferCredentials: true });
    const sections = await probeDevice(config, deviceId, { logger: cliLogger(io, secrets, 'error'), baseDir: dirname(resolve(path)) });
    for (const line of renderProbe(
      config.devices.find((d) => d.id === deviceId)!,
      sections,
    ))
      io.stdout(line);
    const read = sections.some((s) => s.values.some((v) => v.error === undefined && v.value !== undefined));
    if (!read) io.stderr(`wattshift probe: nothing could be read from ${deviceId}`);
    return read ? exitCodes.ok : exitCodes.failure;
  },
};
