/**
 * go-e Charger, API v2 over MQTT: one retained topic per key under `<topicPrefix>/` with a JSON
 * value, writes to `<topicPrefix>/<key>/set`. Keys used: `amp` (A), `frc` (0 neutral, 1 off,
 * 2 on), `nrg` (index 11 = total power, W), `eto` (total energy, Wh), `wh` (energy since the car
 * was connected, Wh), `car` (1 idle, 2 charging, 3 waiting for car, 4 complete, 5 error).
 *
 * `setCurrentA(0)` (or anything below the 6 A IEC 61851 minimum) pauses with `frc=1`; a current
 * of 6 A or more sets `amp` (whole amperes, at most `maxCurrentA`) then `frc=2`. Each write is
 * confirmed by the charger republishing the key.
 */
import { z } from 'zod';
import { WattshiftError } from '../../errors.js';
import type { EvState } from '../../ports.js';
import { LatestValues } from './values.js';
import { guard, limits, parseJson, parseWith, plausible, pushedEnergyMeter, withTimeout } from './util.js';
import type { GoeSource, MqttDevice, MqttDeviceDeps, MqttDeviceOptions } from './types.js';

export const goeMinCurrentA = 6;

const keySchemas = {
  amp: z.number().int().min(0).max(80),
  frc: z.union([z.literal(0), z.literal(1), z.literal(2)]),
  nrg: z.array(z.number().nullable()).min(12),
  eto: z.number().min(0),
  wh: z.number().min(0),
  car: z.number().int().min(0).max(5),
} as const;
type Key = keyof typeof keySchemas;

export function createGoeDevice(
  source: GoeSource,
  deps: MqttDeviceDeps,
  options: MqttDeviceOptions & { maxCurrentA?: number } = {},
): MqttDevice {
  const { connection, clock } = deps;
  const prefix = source.topicPrefix.replace(/\/$/, '');
  const device = options.id ?? prefix;
  const maxCurrentA = options.maxCurrentA ?? 32;
  const requestTimeoutMs = options.requestTimeoutMs ?? 5000;
  const log = deps.logger.child({ component: 'goe', device });
  const values = new LatestValues({ device, clock, staleAfterMs: (options.staleAfterS ?? 120) * 1000, isConnected: () => connection.connected });

  const unsubscribe = connection.subscribe(`${prefix}/+`, (topic, payload) => {
    const key = topic.slice(prefix.length + 1);
    if (!(key in keySchemas)) return;
    guard(
      (err) => {
        values.bad(key, err);
        log.debug({ code: err.code, key, err: err.message }, 'bad go-e value');
      },
      () => values.put(key, parseWith(keySchemas[key as Key] as z.ZodType, parseJson(payload, `${device} ${key}`), `${device} ${key}`)),
    );
  });

  const write = (key: 'amp' | 'frc', value: number, signal: AbortSignal): Promise<void> =>
    withTimeout(clock, requestTimeoutMs, signal, `${device} ${key}=${value}`, async (s) => {
      let seen = values.version(key);
      await connection.publish(`${prefix}/${key}/set`, JSON.stringify(value), { qos: 1 });
      if (values.peek(key) === value) return; // unchanged keys are not republished
      for (;;) {
        await values.waitNewer(key, seen, s);
        seen = values.version(key);
        if (values.peek(key) === value) return;
      }
    });

  return {
    chargeCurrentLimit: {
      async setCurrentA(currentA, signal) {
        if (!Number.isFinite(currentA) || currentA < 0) {
          throw new WattshiftError('MQTT_COMMAND_INVALID', `${device}: current ${currentA} A is not valid`);
        }
        if (currentA < goeMinCurrentA) {
          await write('frc', 1, signal);
          return;
        }
        await write('amp', Math.min(maxCurrentA, Math.floor(currentA)), signal);
        await write('frc', 2, signal);
      },
    },
    energyMeter: pushedEnergyMeter(async () => values.getStamped('eto'), (wh) => plausible(wh, 0, 1e12, `${device} eto`) / 1000),
    powerMeter: {
      readPowerW: async () => {
        const nrg = values.get('nrg') as (number | null)[];
        return plausible(nrg[11], ...limits.powerW, `${device} nrg[11]`);
      },
    },
    evStateReader: {
      readEvState: async (): Promise<EvState> => {
        const car = values.get('car') as number;
        if (car === 0) throw new WattshiftError('DEVICE_BAD_VALUE', `${device}: car state unknown (0)`);
        return { plugged: car !== 1, charging: car === 2 };
      },
    },
    close: unsubscribe,
  };
}
