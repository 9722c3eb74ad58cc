/**
 * go-e Charger, API v2 over MQTT, as go-e documents it (github.com/goecharger/go-eCharger-API-v2,
 * `mqtt-en.md` and `apikeys-en.md`): one retained topic per key under `<topicPrefix>/` with a JSON
 * value, published when the key changes; writes to `<topicPrefix>/<key>/set`. Keys used: `amp`
 * (A), `frc` (0 neutral, 1 off, 2 on), `nrg` (index 11 = total power, W), `eto` (total energy,
 * Wh), `wh` (energy since the car was connected, Wh), `car` (1 idle, 2 charging, 3 waiting for
 * car, 4 complete, 5 error), `trx` (the session's RFID card: null none, 0 without a card, else the
 * card index + 1), `rbt` (ms since boot) and `mcc` (MQTT connected, also the charger's
 * Last Will: `false` when it drops off the broker).
 *
 * Liveness is per device: an unchanged key stays current while the charger is heard from at all
 * (`rbt` ticks) and `mcc` is not `false`; only a silent charger is stale.
 *
 * `setCurrentA(0)` (or anything below the 6 A IEC 61851 minimum) pauses with `frc=1`; a current
 * of 6 A or more sets `amp` (whole amperes, at most `maxCurrentA`) then `frc=2`. `limitCurrentA`
 * (the safe state) only lowers `amp` or pauses: it never forces a charge on. On a clean stop
 * `releaseCurrentA` lowers `amp` to the safe current and sets `frc=0`, handing the decision back to
 * the charger (or pauses, when the safe current is 0). `amp` and `frc` are
 * settings the charger keeps, so a value the charger already publishes is never written again;
 * each write is confirmed by the charger republishing the key. After a set that was not confirmed
 * in time the charger may still take it late, so the next write of that key is sent whatever the
 * charger last published (and, sent after it, is the one that holds).
 *
 * Phase switching: `psm` (phaseSwitchMode, a "Config" key: 0 auto, 1 force 1-phase, 2 force
 * 3-phase; Modbus holding register 332 is "same as api key psm") is written by `setPhases`, and
 * only when the charger publishes another value: go-e keeps Config keys across reboots, so each
 * write is a write to its persistent storage. `pnp` (numberOfPhases, a Status key) says how many
 * phases it charges on; the charger pauses, switches and resumes by itself, no sooner than its
 * configurable `mptwt` (min phase toggle wait time, ms) after the last toggle.
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
  rbt: z.number().min(0),
  mcc: z.boolean(),
  psm: z.union([z.literal(0), z.literal(1), z.literal(2)]),
  pnp: z.number().int().min(0).max(3),
  trx: z.number().int().min(0).max(255).nullable(),
} as const;
type Key = keyof typeof keySchemas;
/** The keys wattshift writes. */
type Setting = 'amp' | 'frc' | 'psm';

export function createGoeDevice(source: GoeSource, deps: MqttDeviceDeps, options: MqttDeviceOptions & { maxCurrentA?: number } = {}): MqttDevice {
  const { connection, clock } = deps;
  const prefix = source.topicPrefix.replace(/\/$/, '');
  const device = options.id ?? prefix;
  const maxCurrentA = options.maxCurrentA ?? 32;
  const requestTimeoutMs = options.requestTimeoutMs ?? 5000;
  const log = deps.logger.child({ component: 'goe', device });
  const values = new LatestValues({
    device,
    clock,
    staleAfterMs: (options.staleAfterS ?? 120) * 1000,
    isConnected: () => connection.connected,
    deviceLiveness: true,
  });
  const offline = new WattshiftError('DEVICE_UNREACHABLE', `${device}: the charger left the broker (mcc=false)`, { details: { device } });

  const unsubscribe = connection.subscribe(`${prefix}/+`, (topic, payload) => {
    const key = topic.slice(prefix.length + 1);
    if (key === 'mcc') {
      // The Last Will: the retained values are the charger's last words, not its state now.
      const online = payload.toString().trim() === 'true';
      values.setOffline(online ? undefined : offline);
      if (online) values.heard();
      return;
    }
    values.heard();
    if (!(key in keySchemas)) return;
    guard(
      (err) => {
        values.bad(key, err);
        log.debug({ code: err.code, key, err: err.message }, 'bad go-e value');
      },
      () => values.put(key, parseWith(keySchemas[key as Key] as z.ZodType, parseJson(payload, `${device} ${key}`), `${device} ${key}`)),
    );
  });

  /**
   * Per setting, the last set sent that the charger has not confirmed (no answer in time, or the
   * publish failed): the charger may still take it, so what it published before is not what it
   * will have. Cleared once the last set sent of that key is confirmed.
   */
  const unconfirmed = new Map<Setting, number>();
  let sets = 0;
  /** The charger's value of a setting, unless a set it may still take leaves it open. */
  const settled = (key: Setting): unknown => (unconfirmed.has(key) ? undefined : values.peek(key));

  const write = (key: Setting, value: number, signal: AbortSignal): Promise<void> =>
    withTimeout(clock, requestTimeoutMs, signal, `${device} ${key}=${value}`, async (s) => {
      // A setting the charger already has (and says so, alive) is not written again.
      if (settled(key) === value && values.alive()) return;
      const n = ++sets;
      unconfirmed.set(key, n);
      let seen = values.version(key);
      await connection.publish(`${prefix}/${key}/set`, JSON.stringify(value), { qos: 1 });
      // Unchanged keys are not republished. A set of the key still on its way is taken before this
      // one (a broker delivers one client's messages on a topic in the order sent): this one holds.
      while (values.peek(key) !== value) {
        await values.waitNewer(key, seen, s);
        seen = values.version(key);
      }
      if (unconfirmed.get(key) === n) unconfirmed.delete(key);
    });

  /** Whether a current pauses the charger (below the IEC 61851 minimum); throws if it is not a current. */
  const pausing = (currentA: number): boolean => {
    if (!Number.isFinite(currentA) || currentA < 0) {
      throw new WattshiftError('MQTT_COMMAND_INVALID', `${device}: current ${currentA} A is not valid`);
    }
    return currentA < goeMinCurrentA;
  };

  const lowerAmp = async (maxA: number, signal: AbortSignal): Promise<void> => {
    const amp = settled('amp');
    const limit = Math.min(maxCurrentA, Math.floor(maxA));
    if (typeof amp !== 'number' || amp > limit) await write('amp', limit, signal);
  };

  return {
    chargeCurrentLimit: {
      async setCurrentA(currentA, signal) {
        if (pausing(currentA)) {
          await write('frc', 1, signal);
          return;
        }
        await write('amp', Math.min(maxCurrentA, Math.floor(currentA)), signal);
        await write('frc', 2, signal);
      },
      async limitCurrentA(maxA, signal) {
        if (pausing(maxA)) {
          await write('frc', 1, signal);
          return;
        }
        await lowerAmp(maxA, signal);
      },
      async releaseCurrentA(maxA, signal) {
        if (pausing(maxA)) {
          await write('frc', 1, signal);
          return;
        }
        await lowerAmp(maxA, signal);
        await write('frc', 0, signal);
      },
    },
    energyMeter: pushedEnergyMeter(
      async () => values.getStamped('eto'),
      (wh) => plausible(wh, ...limits.energyWh, `${device} eto`) / 1000,
    ),
    powerMeter: {
      readPowerW: async () => {
        const nrg = values.get('nrg') as (number | null)[];
        return plausible(nrg[11], ...limits.powerW, `${device} nrg[11]`);
      },
    },
    phaseSwitch: {
      setPhases: (phases, signal) => write('psm', phases === 1 ? 1 : 2, signal),
    },
    evStateReader: {
      readEvState: async (): Promise<EvState> => {
        const car = values.get('car') as number;
        if (car === 0) throw new WattshiftError('DEVICE_BAD_VALUE', `${device}: car state unknown (0)`);
        // trx (apikeys-en.md): null no transaction, 0 without a card, otherwise the card index + 1.
        const trx = values.peek('trx') as number | null | undefined;
        const card = car !== 1 && typeof trx === 'number' && trx > 0 ? { goeCard: trx - 1 } : {};
        // `pnp` only where the charger publishes it (firmware with phase switching).
        const pnp = values.peek('pnp');
        // wh: the energy since the car connected, kept after it leaves until the next one connects.
        const wh = values.peek('wh');
        const session = typeof wh === 'number' && wh <= limits.energyWh[1] ? { sessionKwh: wh / 1000 } : {};
        return { plugged: car !== 1, charging: car === 2, ...card, ...session, ...(typeof pnp === 'number' && pnp > 0 ? { phases: pnp } : {}) };
      },
    },
    close: unsubscribe,
  };
}
