/**
 * Tasmota over MQTT: `cmnd/<topic>/POWER<n>` ON/OFF, confirmed by `stat/<topic>/POWER<n>` (single
 * relay devices answer on `POWER`), telemetry `tele/<topic>/SENSOR` (`ENERGY.Total` kWh,
 * `ENERGY.Power` W, `<sensor>.Temperature`), on demand `Status 10` → `stat/<topic>/STATUS10`,
 * availability `tele/<topic>/LWT`.
 *
 * Lease: Tasmota's `PulseTime<n>` switches a relay OFF a set time after it went ON. It can only
 * serve as a device-side lease when blocking means relay ON (`blockedState: 'on'`); then each
 * block sets `PulseTime<n>` to the lease first. With the default wiring (blocked = OFF) there is
 * no device-side expiry: configure `PowerOnState 1` so a reboot heats, and rely on the
 * supervisor to release. A cap's block (blocked = ON) sets `PulseTime` to the cap's end, at
 * most 64 800 s (18 h, `PulseTime 64900`): the relay falls back by itself when the window ends.
 *
 * Liveness is per device: Tasmota sends telemetry (`tele/<topic>/STATE`, `SENSOR`) only every
 * `TelePeriod` (300 s as shipped) and relay changes as they happen, so a value older than
 * `staleAfterS` is refreshed with one `Status 10` (shared by every reader); the device is stale only
 * when that goes unanswered, and unreachable while its LWT says `Offline`. For close control of
 * the slot's energy, `TelePeriod 10`…`60` on the device gives fresher counters without requests.
 *
 * Source: Tasmota documentation (tasmota.github.io/docs): "Commands" (`Power`, `PulseTime` with
 * 112..64900 = value − 100 seconds, `Status 10`, `TelePeriod` 10..3600 s, default 300) and "MQTT"
 * (`cmnd`/`stat`/`tele` prefixes, `tele/<topic>/LWT` Online/Offline as the last will, `STATE` with
 * `POWER<n>` at each TelePeriod).
 */
import { z } from 'zod';
import { WattshiftError } from '../../errors.js';
import { LatestValues, askingReader, requestAnswer } from './values.js';
import { guard, limits, parseJson, parseWith, plausible, pushedEnergyMeter, withTimeout } from './util.js';
import type { MqttDevice, MqttDeviceDeps, MqttDeviceOptions, TasmotaSource } from './types.js';

/** Longest lease PulseTime can time: 64900 − 100 s. */
export const tasmotaMaxLeaseMs = (64_900 - 100) * 1000;

/** PulseTime encoding: values 112..64900 mean (value − 100) seconds. */
export function pulseTimeForLease(leaseMs: number): number {
  const s = Math.ceil(leaseMs / 1000);
  return Math.min(64_900, Math.max(112, s + 100));
}

const numberOrArray = z.union([z.number(), z.array(z.number())]);
const energySchema = z.looseObject({ Total: z.number().optional(), Power: numberOrArray.optional() });

export function createTasmotaDevice(source: TasmotaSource, deps: MqttDeviceDeps, options: MqttDeviceOptions = {}): MqttDevice {
  const { connection, clock } = deps;
  const relay = source.relay ?? 1;
  const sensor = source.sensor ?? 'DS18B20';
  const fullTopic = source.fullTopic ?? '%prefix%/%topic%/';
  const blockOn = (source.blockedState ?? 'off') === 'on';
  const device = options.id ?? source.topic;
  const requestTimeoutMs = options.requestTimeoutMs ?? 5000;
  const log = deps.logger.child({ component: 'tasmota', device });
  const values = new LatestValues({ device, clock, staleAfterMs: (options.staleAfterS ?? 120) * 1000, isConnected: () => connection.connected });
  const topic = (prefix: 'cmnd' | 'stat' | 'tele', command: string): string => {
    const base = fullTopic.replace('%prefix%', prefix).replace('%topic%', source.topic);
    return `${base.endsWith('/') ? base : `${base}/`}${command}`;
  };

  const applySns = (sns: unknown): void => {
    if (sns === null || typeof sns !== 'object') throw new WattshiftError('DEVICE_BAD_VALUE', `${device}: SENSOR is not an object`);
    const record = sns as Record<string, unknown>;
    if (record.ENERGY !== undefined) {
      guard((e) => { values.bad('energyKwh', e); values.bad('powerW', e); }, () => {
        const energy = parseWith(energySchema, record.ENERGY, `${device} ENERGY`);
        if (energy.Total !== undefined) values.put('energyKwh', plausible(energy.Total, ...limits.energyKwh, `${device} ENERGY.Total`));
        if (energy.Power !== undefined) {
          const p = Array.isArray(energy.Power) ? energy.Power[relay - 1] : energy.Power;
          values.put('powerW', plausible(p, ...limits.powerW, `${device} ENERGY.Power`));
        }
      });
    }
    if (record[sensor] !== undefined) {
      guard((e) => values.bad('temperatureC', e), () => {
        const t = atObject(record[sensor]).Temperature;
        values.put('temperatureC', plausible(t, ...limits.temperatureC, `${device} ${sensor}.Temperature`));
      });
    }
  };
  const badAll = (err: WattshiftError): void => {
    for (const name of ['energyKwh', 'powerW', 'temperatureC']) values.bad(name, err);
    log.debug({ code: err.code, err: err.message }, 'bad SENSOR payload');
  };
  const applyPower = (text: string): void => {
    const t = text.trim().toUpperCase();
    if (t === 'ON' || t === 'OFF') values.put('relay', t === 'ON');
  };

  const powerNames = relay === 1 ? ['POWER', 'POWER1'] : [`POWER${relay}`];
  /** Put on each `Status 10` answer: a request is done when the next one arrives, whatever it carries. */
  const statusKey = 'statusAnswer';
  const unsubscribers = [
    connection.subscribe(topic('tele', 'SENSOR'), (_t, p) => guard(badAll, () => applySns(parseJson(p, `${device} SENSOR`)))),
    ...['STATUS10', 'STATUS8'].map((name) =>
      connection.subscribe(topic('stat', name), (_t, p) => {
        guard(badAll, () => applySns(atObject(parseJson(p, `${device} ${name}`)).StatusSNS));
        values.put(statusKey, true);
      }),
    ),
    connection.subscribe(topic('tele', 'STATE'), (_t, p) => {
      try {
        const st = atObject(JSON.parse(p.toString()) as unknown);
        for (const name of powerNames) if (typeof st[name] === 'string') applyPower(st[name] as string);
      } catch {
        log.debug('ignored unparsable STATE');
      }
    }),
    connection.subscribe(topic('tele', 'LWT'), (_t, p) => {
      const online = p.toString().trim().toLowerCase() === 'online';
      values.setOffline(online ? undefined : new WattshiftError('DEVICE_UNREACHABLE', `${device} reports itself offline (LWT)`, { details: { device } }));
    }),
    ...powerNames.map((name) => connection.subscribe(topic('stat', name), (_t, p) => applyPower(p.toString()))),
    connection.subscribe(topic('stat', 'RESULT'), (_t, p) => {
      try {
        const r = atObject(JSON.parse(p.toString()) as unknown);
        for (const name of powerNames) if (typeof r[name] === 'string') applyPower(r[name] as string);
      } catch {
        // RESULT carries answers to every command; the ones we do not understand are not ours.
      }
    }),
  ];

  /**
   * Reads a value; when missing, older than `staleAfterS` or bad, asks for `Status 10` (once for all
   * readers) and reads again. Telemetry comes only every `TelePeriod` (300 s as shipped), so an old
   * value means a quiet period, not a lost device: the device is stale only when it does not answer.
   */
  const readFresh = askingReader(values, ['DEVICE_STALE', 'DEVICE_BAD_VALUE'], (signal) =>
    requestAnswer(values, statusKey, clock, requestTimeoutMs, `${device} Status 10`, () => connection.publish(topic('cmnd', 'STATUS'), '10', { qos: 1 }), signal),
  (err) => log.debug({ err }, 'status request failed'));

  let pulseSent: number | undefined;
  const setRelay = (on: boolean, signal: AbortSignal): Promise<void> =>
    withTimeout(clock, requestTimeoutMs, signal, `${device} POWER${relay}`, async (s) => {
      let seen = values.version('relay');
      await connection.publish(topic('cmnd', `POWER${relay}`), on ? 'ON' : 'OFF', { qos: 1 });
      for (;;) {
        await values.waitNewer('relay', seen, s);
        seen = values.version('relay');
        if (values.peek('relay') === on) return;
      }
    });

  return {
    heaterSwitch: {
      deviceLease: blockOn,
      ...(blockOn ? { maxLeaseMs: tasmotaMaxLeaseMs } : {}),
      block: async (leaseMs, signal) => {
        // PulseTime is a setting Tasmota keeps in flash: sent only when it changes; each ON restarts it.
        const pulse = pulseTimeForLease(leaseMs);
        if (blockOn && pulse !== pulseSent) {
          await connection.publish(topic('cmnd', `PulseTime${relay}`), String(pulse), { qos: 1 });
          pulseSent = pulse;
        }
        await setRelay(blockOn, signal);
      },
      allow: (signal) => setRelay(!blockOn, signal),
    },
    energyMeter: pushedEnergyMeter((signal) => readFresh('energyKwh', signal), (kwh) => kwh as number),
    powerMeter: { readPowerW: async (signal) => (await readFresh('powerW', signal)).value as number },
    thermometer: { readTemperatureC: async (signal) => (await readFresh('temperatureC', signal)).value as number },
    close() {
      for (const u of unsubscribers) u();
    },
  };
}

function atObject(value: unknown): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new WattshiftError('DEVICE_BAD_VALUE', `expected a JSON object, got ${JSON.stringify(value)?.slice(0, 60)}`);
  }
  return value as Record<string, unknown>;
}
