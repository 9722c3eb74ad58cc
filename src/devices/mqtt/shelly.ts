/**
 * Shelly Gen2/Gen3/Pro over MQTT RPC. Commands go to `<prefix>/rpc` as JSON-RPC with a `src`
 * whose answers arrive on `<src>/rpc`; status comes from `<prefix>/status/switch:<id>`,
 * `<prefix>/status/temperature:<id>` (Plus Add-On), `NotifyStatus` on `<prefix>/events/rpc`,
 * and availability from `<prefix>/online`.
 *
 * A block is `Switch.Set` with `toggle_after` = the lease, so the relay flips back to "allowed"
 * on its own if wattshift stops renewing it. See `BlockedRelayState` for the wiring convention.
 * A cap's block is written with `toggle_after` running to the cap's end: the timer runs on the
 * device, so the cap holds through a dead daemon and ends with its window. The documentation
 * gives `toggle_after` no upper bound; wattshift writes at most a day (`shellyMaxLeaseMs`).
 * Only Gen2+ RPC is spoken here: a Gen1 device (`relay/0/command`, HTTP `timer`) is not supported.
 *
 * Liveness is per device: a Shelly notifies a component's status when it changes (apower past its
 * report threshold, the temperature past `report_thr_C`, `aenergy` as its minute record turns), so
 * an unchanged value stays current while the device is heard from at all (any status,
 * notification or RPC answer) and `online` is not `false` (its last will). Only after `staleAfterS`
 * of silence is a value stale; a read then asks `Shelly.GetStatus` once (one request in flight,
 * whatever the number of readers), and fails with DEVICE_STALE only when that goes unanswered.
 * Values keep their arrival time as their stamp: a counter notified once a minute is as old as
 * its notification, not as the device's last word.
 *
 * Source: Shelly Gen2 API documentation (shelly-api-docs.shelly.cloud/gen2): "MQTT" component (RPC
 * channel on `<topic_prefix>/rpc`, status on `<topic_prefix>/status/<component:id>`, `rpc_ntf`),
 * "Notifications" (`NotifyStatus` on `<topic_prefix>/events/rpc`, changed keys only), "Switch"
 * (`Switch.Set` with `toggle_after`, `apower`, `aenergy.total` in Wh).
 */
import { z } from 'zod';
import { WattshiftError } from '../../errors.js';
import { LatestValues, askingReader } from './values.js';
import { guard, limits, parseJson, parseWith, plausible, pushedEnergyMeter, withTimeout } from './util.js';
import type { MqttDevice, MqttDeviceDeps, MqttDeviceOptions, ShellySource } from './types.js';

const switchStatusSchema = z.looseObject({
  output: z.boolean().optional(),
  apower: z.number().optional(),
  aenergy: z.looseObject({ total: z.number() }).optional(),
});
const temperatureStatusSchema = z.looseObject({ tC: z.number().nullable().optional() });
const rpcResponseSchema = z.looseObject({
  id: z.number(),
  result: z.unknown().optional(),
  error: z.looseObject({ code: z.number(), message: z.string().optional() }).optional(),
});
const notifySchema = z.looseObject({ method: z.string(), params: z.record(z.string(), z.unknown()).optional() });

/** Longest `toggle_after` wattshift writes: a day, the longest failsafe an EEBus LPC cap asks for. */
export const shellyMaxLeaseMs = 24 * 3_600_000;

let instance = 0;

export function createShellyDevice(source: ShellySource, deps: MqttDeviceDeps, options: MqttDeviceOptions = {}): MqttDevice {
  const { connection, clock } = deps;
  const prefix = source.topicPrefix.replace(/\/$/, '');
  const switchId = source.switchId ?? 0;
  const sensorId = source.temperatureSensorId;
  const blockOn = (source.blockedState ?? 'off') === 'on';
  const device = options.id ?? prefix;
  const requestTimeoutMs = options.requestTimeoutMs ?? 5000;
  const log = deps.logger.child({ component: 'shelly', device });
  const values = new LatestValues({
    device,
    clock,
    staleAfterMs: (options.staleAfterS ?? 120) * 1000,
    isConnected: () => connection.connected,
    deviceLiveness: true,
    quietValuesHold: false,
  });
  const src = `wattshift-${process.pid}-${++instance}-${Math.random().toString(36).slice(2, 8)}`;
  const switchKey = `switch:${switchId}`;
  const tempKey = sensorId === undefined ? undefined : `temperature:${sensorId}`;
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let nextId = 1;

  const applySwitch = (raw: unknown): void => {
    const s = parseWith(switchStatusSchema, raw, `${device} ${switchKey}`);
    if (s.apower !== undefined) values.put('powerW', plausible(s.apower, ...limits.powerW, `${device} apower`));
    if (s.aenergy !== undefined) values.put('energyWh', plausible(s.aenergy.total, ...limits.energyWh, `${device} aenergy.total`));
    if (s.output !== undefined) values.put('output', s.output);
  };
  const applyTemperature = (raw: unknown): void => {
    const t = parseWith(temperatureStatusSchema, raw, `${device} ${tempKey}`);
    if (t.tC === null || t.tC === undefined) {
      throw new WattshiftError('DEVICE_BAD_VALUE', `${device}: temperature sensor ${tempKey} reports no value (disconnected?)`);
    }
    values.put('temperatureC', plausible(t.tC, ...limits.temperatureC, `${device} tC`));
  };
  const badSwitch = (err: WattshiftError): void => {
    values.bad('powerW', err);
    values.bad('energyWh', err);
    log.debug({ code: err.code, err: err.message }, 'bad switch status');
  };
  const badTemp = (err: WattshiftError): void => {
    values.bad('temperatureC', err);
    log.debug({ code: err.code, err: err.message }, 'bad temperature status');
  };
  const applyFullStatus = (status: Record<string, unknown>): void => {
    if (status[switchKey] !== undefined) guard(badSwitch, () => applySwitch(status[switchKey]));
    if (tempKey && status[tempKey] !== undefined) guard(badTemp, () => applyTemperature(status[tempKey]));
  };

  const unsubscribers = [
    connection.subscribe(`${prefix}/status/${switchKey}`, (_t, payload) => {
      values.heard();
      guard(badSwitch, () => applySwitch(parseJson(payload, `${device} ${switchKey}`)));
    }),
    connection.subscribe(`${prefix}/online`, (_t, payload) => {
      const online = payload.toString().trim() === 'true';
      values.setOffline(online ? undefined : new WattshiftError('DEVICE_UNREACHABLE', `${device} reports itself offline`, { details: { device } }));
      if (online) values.heard();
    }),
    connection.subscribe(`${prefix}/events/rpc`, (_t, payload) => {
      values.heard();
      try {
        const msg = parseWith(notifySchema, parseJson(payload, `${device} event`), `${device} event`);
        if ((msg.method === 'NotifyStatus' || msg.method === 'NotifyFullStatus') && msg.params) applyFullStatus(msg.params);
      } catch (err) {
        log.debug({ err }, 'ignored unparsable Shelly event');
      }
    }),
    connection.subscribe(`${src}/rpc`, (_t, payload) => {
      let msg: z.infer<typeof rpcResponseSchema>;
      try {
        msg = parseWith(rpcResponseSchema, parseJson(payload, `${device} rpc`), `${device} rpc`);
      } catch (err) {
        log.debug({ err }, 'ignored unparsable Shelly RPC answer');
        return;
      }
      values.heard();
      const waiter = pending.get(msg.id);
      if (!waiter) return;
      pending.delete(msg.id);
      if (msg.error) {
        waiter.reject(
          new WattshiftError('MQTT_COMMAND_INVALID', `${device} refused the command: ${msg.error.code} ${msg.error.message ?? ''}`.trim(), {
            details: { device, rpcError: msg.error.code },
          }),
        );
      } else waiter.resolve(msg.result);
    }),
  ];
  if (tempKey) {
    unsubscribers.push(
      connection.subscribe(`${prefix}/status/${tempKey}`, (_t, payload) => {
        values.heard();
        guard(badTemp, () => applyTemperature(parseJson(payload, `${device} ${tempKey}`)));
      }),
    );
  }

  const rpc = (method: string, params: Record<string, unknown>, signal: AbortSignal): Promise<unknown> =>
    withTimeout(clock, requestTimeoutMs, signal, `${device} ${method}`, async (inner) => {
      const id = nextId++;
      const answer = new Promise<unknown>((resolve, reject) => {
        pending.set(id, { resolve, reject });
        inner.addEventListener(
          'abort',
          () => {
            pending.delete(id);
            reject(inner.reason);
          },
          { once: true },
        );
      });
      answer.catch(() => undefined); // awaited below; this only keeps an early failure from going unhandled
      await connection.publish(`${prefix}/rpc`, JSON.stringify({ id, src, method, params }), { qos: 1 });
      return answer;
    });

  /**
   * Reads a value; when missing, stale or bad, asks the device for its status once and reads again
   * (a device that notifies changes only would otherwise never replace an unusable value).
   */
  const readFresh = askingReader(
    values,
    ['DEVICE_STALE', 'DEVICE_BAD_VALUE'],
    async (signal) => {
      const result = await rpc('Shelly.GetStatus', {}, signal);
      if (result && typeof result === 'object') applyFullStatus(result as Record<string, unknown>);
    },
    (err) => log.debug({ err }, 'status request failed'),
  );

  const setRelay = async (on: boolean, toggleAfterS: number | undefined, signal: AbortSignal): Promise<void> => {
    const params: Record<string, unknown> = { id: switchId, on };
    if (toggleAfterS !== undefined) params.toggle_after = toggleAfterS;
    await rpc('Switch.Set', params, signal);
    values.put('output', on);
  };

  return {
    heaterSwitch: {
      deviceLease: true,
      maxLeaseMs: shellyMaxLeaseMs,
      block: (leaseMs, signal) => setRelay(blockOn, Math.max(1, Math.ceil(leaseMs / 1000)), signal),
      allow: (signal) => setRelay(!blockOn, undefined, signal),
    },
    energyMeter: pushedEnergyMeter(
      (signal) => readFresh('energyWh', signal),
      (wh) => (wh as number) / 1000,
    ),
    powerMeter: {
      readPowerW: async (signal) => (await readFresh('powerW', signal)).value as number,
    },
    ...(tempKey
      ? { thermometer: { readTemperatureC: async (signal: AbortSignal) => (await readFresh('temperatureC', signal)).value as number } }
      : {}),
    close() {
      for (const u of unsubscribers) u();
      for (const [, w] of pending) w.reject(new WattshiftError('MQTT_UNAVAILABLE', `${device} closed`));
      pending.clear();
    },
  };
}
