/**
 * The main meter through the HAN port, as the open-source AMS reader firmware publishes it over
 * MQTT with the payload "JSON (classic)" (github.com/UtilitechAS/amsreader-firmware, wiki pages
 * "MQTT configuration" and "Message formats"): one JSON object per meter list on the configured
 * publish topic, `{ id, name, up, t, vcc, rssi, temp, data: {...}, realtime: {...} }`. The `data`
 * object follows the meter's list:
 *
 * - list 1 (every 2–2.5 s on Nordic meters): `P`, active import power, W;
 * - list 2 (every 10 s): also `Q`, `PO` (active export power, W), `QO`, `I1..I3` (phase currents,
 *   A), `U1..U3` (phase voltages, V) and the meter's `id` and `type`;
 * - list 3 (once an hour, a few seconds past the hour): also `tPI`/`tPO` (cumulative active
 *   import/export, kWh), `tQI`/`tQO` and `rtc`, the meter's clock (Unix seconds) that the
 *   cumulative registers belong to: the whole hour before it.
 *
 * The registers are metered at the meter's own clock (`rtc`), so consecutive hourly registers
 * bound exactly one hour each. Power is import minus export (positive: the home draws). Phase
 * values absent on a 1-phase meter (or published as 0 V) are left out; a phase missing between two
 * given ones is NaN (not measured). A list without a usable value for a quantity leaves that
 * quantity as it was; a malformed payload is DEVICE_BAD_VALUE, logged once until a good list comes.
 *
 * Every value is checked against its physical bounds (`core/metered-bounds.ts`): a current, a
 * voltage, a power, a register or a meter clock out of bounds makes its quantity (power, phases,
 * registers) DEVICE_BAD_VALUE until a good list: missing, never a value the main fuse would credit.
 */
import { z } from 'zod';
import { WattshiftError } from '../../errors.js';
import type { PhaseReading } from '../../ports.js';
import { LatestValues } from './values.js';
import { metered, meterClock } from '../../core/metered-bounds.js';
import { rateLimitedWarn } from '../../log-limit.js';
import { guard, parseJson, parseWith, pushedEnergyMeter } from './util.js';
import type { AmsReaderSource, MqttDevice, MqttDeviceDeps, MqttDeviceOptions } from './types.js';

const num = z.number().finite();
const payloadSchema = z.looseObject({
  data: z.looseObject({
    P: num.optional(),
    PO: num.optional(),
    I1: num.optional(),
    I2: num.optional(),
    I3: num.optional(),
    U1: num.optional(),
    U2: num.optional(),
    U3: num.optional(),
    tPI: num.optional(),
    tPO: num.optional(),
    rtc: num.optional(),
  }),
});

/**
 * Values by line, position kept: a line the list leaves out between others (an IT meter measuring
 * only I1 and I3) is NaN, never shifted onto the next; lines after the last one given are absent.
 */
function byLine(values: (number | undefined)[]): number[] {
  const last = values.findLastIndex((v) => v !== undefined);
  return values.slice(0, last + 1).map((v) => v ?? NaN);
}

/** The hourly list comes at each hour's turn: the first within an hour of the start, with a margin. */
const firstRegistersWithinMs = 65 * 60_000;

export function createAmsReaderDevice(source: AmsReaderSource, deps: MqttDeviceDeps, options: MqttDeviceOptions = {}): MqttDevice {
  const { connection, clock } = deps;
  const device = options.id ?? source.topic;
  const log = deps.logger.child({ component: 'amsreader', device });
  // Energy comes once an hour: its own age may reach an hour; the device is alive while lists come.
  // Every list carries its values afresh, so a value's arrival is its time: currents that stopped
  // coming age (for the main fuse) even while list 1 power keeps the device alive.
  const values = new LatestValues({
    device,
    clock,
    staleAfterMs: (options.staleAfterS ?? 120) * 1000,
    isConnected: () => connection.connected,
    deviceLiveness: true,
    quietValuesHold: false,
  });
  const warn = rateLimitedWarn(log);
  /** The quantities whose last list was unusable (a warning once per run of bad lists, rate-limited). */
  const bad = new Set<string>();
  /** The registers with the meter time they belong to. */
  let registers: { importKwh: number; exportKwh: number | undefined; atMs: number } | undefined;
  const startedMs = clock.nowMs();

  /** Runs one quantity's update; a refused value makes that quantity missing until a good list. */
  const settle = (name: string, update: () => void): void => {
    guard(
      (err) => {
        values.bad(name, err);
        if (!bad.has(name)) warn(err.code, { quantity: name, err: err.message }, 'bad AMS reader value: treated as missing until a good list comes');
        bad.add(name);
      },
      () => {
        update();
        if (bad.delete(name)) log.info({ quantity: name }, 'AMS reader payloads usable again');
      },
    );
  };

  const unsubscribe = connection.subscribe(source.topic, (_topic, payload) => {
    let data: z.infer<typeof payloadSchema>['data'] | undefined;
    settle('powerW', () => {
      data = parseWith(payloadSchema, parseJson(payload, device), device).data;
    });
    if (!data) return;
    const d = data;
    values.heard();
    if (d.P !== undefined) {
      settle('powerW', () =>
        values.put('powerW', metered('directedPowerW', d.P, `${device} P`) - metered('directedPowerW', d.PO ?? 0, `${device} PO`)),
      );
    }
    const currents = byLine([d.I1, d.I2, d.I3]);
    if (currents.length > 0) {
      settle('phases', () => {
        const voltages = byLine([d.U1, d.U2, d.U3].map((v) => (v !== undefined && v > 0 ? v : undefined)));
        currents.forEach((a, l) => Number.isNaN(a) || metered('phaseCurrentA', a, `${device} I${l + 1}`));
        voltages.forEach((v, l) => Number.isNaN(v) || metered('phaseVoltageV', v, `${device} U${l + 1}`));
        values.put('phases', {
          currentsA: currents,
          voltagesV: voltages.length === currents.length && voltages.every(Number.isFinite) ? voltages : [],
        } satisfies Omit<PhaseReading, 'atMs'>);
      });
    }
    if (d.tPI !== undefined) {
      settle('registers', () => {
        const nowMs = clock.nowMs();
        const atMs = d.rtc !== undefined && d.rtc > 0 ? meterClock(d.rtc * 1000, nowMs, `${device} rtc`) : Math.floor(nowMs / 3_600_000) * 3_600_000;
        const exportKwh = d.tPO === undefined ? undefined : metered('energyKwh', d.tPO, `${device} tPO`);
        registers = { importKwh: metered('energyKwh', d.tPI, `${device} tPI`), exportKwh, atMs };
        values.put('registers', registers);
      });
    }
  });

  const readRegisters = (): { value: unknown; atMs: number } => {
    if (!registers) {
      // The meter lists its registers once an hour: until the first list is due, their absence is
      // no fault of the meter's (the supervisor does not count it), only a value still to come.
      const awaiting = clock.nowMs() - startedMs < firstRegistersWithinMs;
      throw new WattshiftError(
        'DEVICE_STALE',
        `${device}: no hourly register received yet${awaiting ? ' (the meter lists them once an hour)' : ''}`,
        awaiting ? { details: { awaiting: true } } : {},
      );
    }
    values.get('registers'); // alive, connected, present
    return { value: registers.importKwh, atMs: registers.atMs };
  };

  return {
    energyMeter: {
      ...pushedEnergyMeter(
        async () => readRegisters(),
        (kwh) => kwh as number,
      ),
      readExportEnergyKwh: async () => {
        readRegisters();
        if (registers?.exportKwh === undefined) throw new WattshiftError('DEVICE_STALE', `${device}: the meter gives no export register (tPO)`);
        return registers.exportKwh;
      },
    },
    powerMeter: { readPowerW: async () => values.get('powerW') as number },
    phaseMeter: {
      readPhases: async (): Promise<PhaseReading> => {
        const { value, atMs } = values.getStamped('phases');
        return { ...(value as Omit<PhaseReading, 'atMs'>), atMs };
      },
    },
    close: unsubscribe,
  };
}
