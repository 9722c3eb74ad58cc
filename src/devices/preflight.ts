/**
 * The device checks `run` would otherwise meet only when it builds the devices: every Modbus
 * profile resolves (built-in name or register-map file) and offers the points its role needs, and
 * the TLS files can be read. `check` and `run` both call them before anything connects.
 */
import { accessSync, constants } from 'node:fs';
import type { CheckableConfig, ConfigProblem } from '../config/load.js';
import type { ModbusSource } from '../config/schema.js';
import { systemClock } from '../clock.js';
import { isWattshiftError } from '../errors.js';
import { silentLogger } from '../log.js';
import { contactSourcesOf, sourcesOf } from './factory.js';
import { createModbusBus } from './modbus/bus.js';
import { createModbusDevice } from './modbus/modbus-device.js';
import { loadProfile } from './modbus/profiles.js';
import { didYouMean } from '../config/suggest.js';

function problemOf(err: unknown, profile: string): string {
  if (!isWattshiftError(err)) throw err;
  const known = (err.details as { known?: unknown } | undefined)?.known;
  if (!Array.isArray(known)) return err.message;
  const names = known.map(String);
  return `${err.message}${didYouMean(profile, names)} (built-in profiles: ${names.join(', ')})`;
}

/** One problem per Modbus source whose profile is missing, invalid or lacks a point its role needs. */
export function checkDeviceSources(config: Pick<CheckableConfig, 'devices' | 'modbus'>): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const logger = silentLogger();
  config.devices.forEach((device, i) => {
    if (!device) return;
    // A heat pump's contacts are relays: checked as switches, under their own keys.
    const contacts = contactSourcesOf(device).map(([key, s]) => ['switch', s, `contacts.${key}`] as const);
    for (const [role, source, key] of [...sourcesOf(device).map(([r, s]) => [r, s, r] as const), ...contacts]) {
      if (source.type !== 'modbus') continue;
      const s = source as ModbusSource;
      const bus = config.modbus?.[s.bus];
      const at = `devices[${i}].${key}.profile`;
      try {
        const profile = loadProfile(s.profile);
        // An unknown bus is reported by the cross-field rules. A bus connects on its first
        // request only, which this check never makes.
        if (bus) createModbusDevice(s, { bus: createModbusBus(s.bus, bus, { clock: systemClock, logger }), profile, logger }).capabilities(role);
      } catch (err) {
        problems.push({ path: at, message: problemOf(err, s.profile) });
      }
    }
  });
  return problems;
}

/**
 * The TLS files `run` reads at start must be readable by this user: the home broker's CA,
 * certificate and key, the OCPP central system's certificate and key, the fleet broker's CA.
 */
export function checkTlsFiles(config: Pick<CheckableConfig, 'mqtt' | 'ocpp' | 'upstream'>): ConfigProblem[] {
  const files: [string, string | undefined][] = [
    ['mqtt.ca', config.mqtt?.ca],
    ['mqtt.cert', config.mqtt?.cert],
    ['mqtt.key', config.mqtt?.key],
    ['ocpp.tls.cert', config.ocpp?.tls?.cert],
    ['ocpp.tls.key', config.ocpp?.tls?.key],
    ['upstream.ca', config.upstream?.mode === 'fleet' ? config.upstream.ca : undefined],
  ];
  const out: ConfigProblem[] = [];
  for (const [path, file] of files) {
    if (!file) continue;
    try {
      accessSync(file, constants.R_OK);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      out.push({
        path,
        message: `cannot read ${file}: ${code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : String(code)}`,
      });
    }
  }
  return out;
}
