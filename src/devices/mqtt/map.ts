/**
 * A user-defined MQTT device: one JSON (or plain number) state topic read through dot paths with
 * scales, a command topic with block/allow payloads and a current topic with a payload template.
 * Only the capabilities whose fields are configured are offered. Commands are fire-and-forget
 * (QoS 1 to the broker): a generic device gives no confirmation and no device-side lease.
 *
 * Liveness, as far as the device offers it: an availability topic (a last will, or a bridge's
 * `online`/`offline`, plain or as JSON `{"state": …}`) makes it unreachable while offline; a refresh
 * topic (e.g. zigbee2mqtt's `<device>/get`) is asked once, shared by every reader, when a value is
 * missing or older than `staleAfterS`, so a device that publishes only on change is stale only when
 * it does not answer.
 */
import { WattshiftError } from '../../errors.js';
import type { EvState } from '../../ports.js';
import { LatestValues, askingReader, requestAnswer } from './values.js';
import { metered } from '../../core/metered-bounds.js';
import { atPath, guard, limits, plausible, pushedEnergyMeter } from './util.js';
import type { MqttDevice, MqttDeviceDeps, MqttDeviceOptions, MqttMapSource } from './types.js';

function parsePayload(payload: Buffer): unknown {
  const text = payload.toString('utf8').trim();
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text; // a bare word such as ON, or a number with a unit the paths cannot reach
  }
}

export function truthy(value: unknown, what: string): boolean {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return value !== 0;
  if (typeof value === 'string') {
    const v = value.trim().toLowerCase();
    if (['true', 'on', '1', 'yes'].includes(v)) return true;
    if (['false', 'off', '0', 'no'].includes(v)) return false;
  }
  throw new WattshiftError('DEVICE_BAD_VALUE', `${what}: ${JSON.stringify(value)} is not a boolean`);
}

export function createMqttMapDevice(source: MqttMapSource, deps: MqttDeviceDeps, options: MqttDeviceOptions = {}): MqttDevice {
  const { connection, clock } = deps;
  const device = options.id ?? source.stateTopic ?? source.commandTopic ?? 'mqtt-device';
  const log = deps.logger.child({ component: 'mqtt-map', device });
  const values = new LatestValues({ device, clock, staleAfterMs: (options.staleAfterS ?? 120) * 1000, isConnected: () => connection.connected });
  const energyScale = source.energyScale ?? 1;
  const powerScale = source.powerScale ?? 1;

  const fields: { name: string; path: string | undefined; convert: (v: unknown) => unknown }[] = [
    // Bounded after scaling: the bounds are physical, in the units wattshift reads.
    {
      name: 'energyKwh',
      path: source.energyKwhPath,
      convert: (v) => metered('energyKwh', plausible(v, -Infinity, Infinity, `${device} energy`) * energyScale, `${device} energy`),
    },
    {
      name: 'powerW',
      path: source.powerWPath,
      convert: (v) => metered('powerW', plausible(v, -Infinity, Infinity, `${device} power`) * powerScale, `${device} power`),
    },
    { name: 'temperatureC', path: source.temperatureCPath, convert: (v) => plausible(v, ...limits.temperatureC, `${device} temperature`) },
    { name: 'plugged', path: source.pluggedPath, convert: (v) => truthy(v, `${device} plugged`) },
    { name: 'charging', path: source.chargingPath, convert: (v) => truthy(v, `${device} charging`) },
  ];
  const active = fields.filter((f): f is typeof f & { path: string } => f.path !== undefined);

  const unsubscribers: (() => void)[] = [];
  if (source.stateTopic && active.length > 0) {
    unsubscribers.push(
      connection.subscribe(source.stateTopic, (_t, payload) => {
        const parsed = parsePayload(payload);
        values.put(refreshKey, true);
        for (const f of active) {
          guard(
            (err) => {
              values.bad(f.name, err);
              log.debug({ code: err.code, err: err.message }, 'bad value in state payload');
            },
            () => values.put(f.name, f.convert(atPath(parsed, f.path))),
          );
        }
      }),
    );
  }
  if (source.availabilityTopic) {
    const online = (source.availablePayload ?? 'online').toLowerCase();
    const offline = (source.unavailablePayload ?? 'offline').toLowerCase();
    const gone = new WattshiftError('DEVICE_UNREACHABLE', `${device} reports itself offline (${source.availabilityTopic})`, { details: { device } });
    unsubscribers.push(
      connection.subscribe(source.availabilityTopic, (_t, payload) => {
        const parsed = parsePayload(payload);
        const said = String(parsed !== null && typeof parsed === 'object' ? (parsed as Record<string, unknown>).state : parsed).toLowerCase();
        if (said === offline) values.setOffline(gone);
        else if (said === online) values.setOffline(undefined);
      }),
    );
  }
  const has = (path: string | undefined): boolean => path !== undefined && source.stateTopic !== undefined;
  const publish = async (topic: string, payload: string): Promise<void> => connection.publish(topic, payload, { qos: 1 });

  // Answered by the next state message; without a refresh topic a stale value stays stale.
  const refreshKey = 'stateMessages';
  const { refreshTopic } = source;
  const read = askingReader(
    values,
    refreshTopic ? ['DEVICE_STALE'] : [],
    (signal) =>
      requestAnswer(
        values,
        refreshKey,
        clock,
        options.requestTimeoutMs ?? 5000,
        `${device} refresh`,
        () => publish(refreshTopic!, source.refreshPayload ?? ''),
        signal,
      ),
    (err) => log.debug({ err }, 'refresh request unanswered'),
  );
  const value = async (name: string, signal: AbortSignal): Promise<unknown> => (await read(name, signal)).value;

  const dev: MqttDevice = {
    close() {
      for (const u of unsubscribers) u();
    },
  };
  if (has(source.energyKwhPath))
    dev.energyMeter = pushedEnergyMeter(
      (signal) => read('energyKwh', signal),
      (kwh) => kwh as number,
    );
  if (has(source.powerWPath)) dev.powerMeter = { readPowerW: async (signal) => (await value('powerW', signal)) as number };
  if (has(source.temperatureCPath)) dev.thermometer = { readTemperatureC: async (signal) => (await value('temperatureC', signal)) as number };
  if (has(source.pluggedPath)) {
    dev.evStateReader = {
      readEvState: async (signal): Promise<EvState> => {
        const plugged = (await value('plugged', signal)) as boolean;
        const charging = source.chargingPath ? ((await value('charging', signal)) as boolean) : false;
        return { plugged, charging: plugged && charging };
      },
    };
  }
  const { commandTopic, blockPayload, allowPayload, currentTopic } = source;
  if (commandTopic && blockPayload !== undefined && allowPayload !== undefined) {
    dev.heaterSwitch = {
      deviceLease: false,
      block: () => publish(commandTopic, blockPayload),
      allow: () => publish(commandTopic, allowPayload),
    };
  }
  if (currentTopic) {
    const template = source.currentPayloadTemplate ?? '{{value}}';
    dev.chargeCurrentLimit = {
      setCurrentA: async (currentA) => {
        if (!Number.isFinite(currentA) || currentA < 0) {
          throw new WattshiftError('MQTT_COMMAND_INVALID', `${device}: current ${currentA} A is not valid`);
        }
        await publish(currentTopic, template.split('{{value}}').join(String(currentA)));
      },
    };
  }
  return dev;
}
