import type { Logger } from '../log.js';
import { startCommandListener } from './commands.js';
import type { DeviceCommand } from './commands.js';
import { discoveryMessages, discoveryRemovalTopics, haStatusTopic, type DiscoveryInput } from './discovery.js';
import type { HaMqttPort } from './port.js';
import { createHaPublisher } from './publisher.js';
import { fieldsForKind } from './state.js';
import { haTopics, parseCommandTopic } from './topics.js';
import type { HomeView } from '../view/model.js';

export interface HaBridgeOptions {
  port: HaMqttPort;
  baseTopic: string;
  discovery: { enabled: boolean; prefix: string };
  /** Fallback currency for discovery units while neither a price nor a plan is known. */
  currency: string;
  swVersion: string;
  supportUrl?: string;
  /** The status page, linked from each Home Assistant device. */
  configurationUrl?: string;
  logger: Logger;
  getView: () => HomeView;
  onCommand: (cmd: DeviceCommand) => Promise<void>;
  /** Told about each refused command or oversized message, with its code (for counters). */
  onRefused?: (code: string) => void;
  /** Told the outcome of every command, rejected ones included. */
  onCommandOutcome?: (ok: boolean, code?: string) => void;
  /** Device ids announced by the previous run (persisted by the caller). */
  previousDeviceIds: readonly string[];
  /** Receives the device ids now announced, whenever they change, for the caller to persist. */
  saveDeviceIds?: (ids: string[]) => void | Promise<void>;
}

export interface HaBridge {
  /** Announces `online`, subscribes to commands and HA's birth message, publishes everything. */
  start(): Promise<void>;
  /** Publishes what changed since the last call (state and discovery). */
  update(): Promise<void>;
  /**
   * After a reconnect: announces `online` again and republishes everything (the broker may have
   * lost retained messages, and the will may have replaced `online`).
   */
  resync(): Promise<void>;
  /** Publishes `offline` (clean stop). */
  stop(): Promise<void>;
  /**
   * Clears a command topic whose retained message was refused for its size before it could be
   * read (it would come back at every connect); done now if possible, else at the next resync.
   */
  clearOversizedCommand(topic: string): void;
}

/** Wires publisher, commands and discovery to one MQTT port. */
export function createHaBridge(options: HaBridgeOptions): HaBridge {
  const log = options.logger.child({ component: 'ha' });
  const t = haTopics(options.baseTopic);
  const publisher = createHaPublisher({ port: options.port, baseTopic: options.baseTopic, logger: options.logger });
  const lastDiscovery = new Map<string, string>();
  /**
   * The discovery input last published (location, devices with their command ranges, currency):
   * the messages are built again only when it changes, not at every control tick.
   */
  let discoveryBuiltFrom: string | undefined;
  const forgetDiscovery = (): void => {
    lastDiscovery.clear();
    discoveryBuiltFrom = undefined;
  };
  let announced = new Set(options.previousDeviceIds);
  let stopped = false;
  const toClear = new Set<string>();

  async function clearOne(topic: string): Promise<void> {
    await options.port.publish(topic, '', { retain: true, qos: 1 });
    if (toClear.delete(topic)) log.warn({ code: 'MQTT_MESSAGE_TOO_LARGE', topic }, 'cleared an oversized retained command');
  }

  async function clearPending(): Promise<void> {
    for (const topic of [...toClear]) await clearOne(topic);
  }

  /** Only what discovery is built from: not the readings that change at every tick. */
  function discoveryInputOf(view: HomeView): DiscoveryInput {
    return {
      baseTopic: options.baseTopic,
      prefix: options.discovery.prefix,
      location: { id: view.location.id, name: view.location.name, ...(view.location.fuse ? { fuse: true } : {}) },
      devices: view.devices.map((d) => ({ id: d.id, name: d.name, kind: d.kind, ...(d.ranges ? { ranges: d.ranges } : {}) })),
      currency: view.price?.currency ?? view.plan?.currency ?? options.currency,
      swVersion: options.swVersion,
      ...(options.supportUrl ? { supportUrl: options.supportUrl } : {}),
      ...(options.configurationUrl ? { configurationUrl: options.configurationUrl } : {}),
    };
  }

  async function publishDiscovery(view: HomeView): Promise<void> {
    if (!options.discovery.enabled) return;
    const input = discoveryInputOf(view);
    // The messages are built from this input alone: the same input gives the same messages.
    const builtFrom = JSON.stringify(input);
    if (builtFrom === discoveryBuiltFrom) return;
    const messages = discoveryMessages(input);
    for (const m of messages) {
      if (stopped) return; // a stop drops the rest (see publisher.stop)
      const payload = JSON.stringify(m.payload);
      if (lastDiscovery.get(m.topic) === payload) continue;
      await options.port.publish(m.topic, payload, { retain: true, qos: 1 });
      lastDiscovery.set(m.topic, payload);
    }
    if (!stopped) discoveryBuiltFrom = builtFrom;
  }

  /** Removes devices that were announced before but are no longer configured. */
  async function removeStale(view: HomeView): Promise<void> {
    const current = new Set(view.devices.map((d) => d.id));
    const gone = [...announced].filter((id) => !current.has(id));
    for (const id of gone) {
      if (options.discovery.enabled) {
        for (const topic of discoveryRemovalTopics(options.discovery.prefix, view.location.id, id)) {
          await options.port.publish(topic, '', { retain: true, qos: 1 });
          lastDiscovery.delete(topic);
        }
      }
      const fieldTopics = (['hotWaterTank', 'evCharger', 'meter', 'heatPump'] as const)
        .flatMap((k) => fieldsForKind(k))
        .map((f) => t.deviceField(id, f));
      await publisher.clearDevice(id, [...new Set(fieldTopics)]);
      log.info({ deviceId: id }, 'removed a device that left the config');
    }
    const changed = gone.length > 0 || [...current].some((id) => !announced.has(id));
    announced = current;
    if (changed) await options.saveDeviceIds?.([...current]);
  }

  async function publishAll(): Promise<void> {
    if (stopped) return;
    const view = options.getView();
    await removeStale(view);
    await publishDiscovery(view);
    await publisher.publishView(view);
  }

  // One update at a time: each remembers what it sent only after the broker took it, so two
  // overlapping ones (start, the control loop's tick, HA's birth) each sent everything again.
  // Calls during a run share one more run after it, which sees what the first one sent.
  let running: Promise<void> | null = null;
  let next: Promise<void> | null = null;
  function update(): Promise<void> {
    if (!running) {
      running = publishAll().finally(() => (running = null));
      return running;
    }
    next ??= running
      .catch(() => undefined)
      .then(() => {
        next = null;
        return update();
      });
    return next;
  }

  return {
    async start() {
      stopped = false;
      await publisher.start();
      await startCommandListener({
        port: options.port,
        baseTopic: options.baseTopic,
        logger: options.logger,
        devices: () => options.getView().devices,
        onCommand: options.onCommand,
        ...(options.onRefused ? { onRefused: options.onRefused } : {}),
        ...(options.onCommandOutcome ? { onOutcome: options.onCommandOutcome } : {}),
      });
      await clearPending();
      if (options.discovery.enabled) {
        await options.port.subscribe(haStatusTopic(options.discovery.prefix), (_topic, payload, meta) => {
          // A retained birth is an old one (some set-ups retain it): this start announces anyway.
          if (meta.retained || payload.toString('utf8').trim() !== 'online') return;
          log.info('Home Assistant came online: republishing discovery and state');
          forgetDiscovery();
          publisher.invalidate();
          update().catch((err: unknown) => {
            log.warn({ code: 'MQTT_UNAVAILABLE', err: err instanceof Error ? err.message : String(err) }, 'republish failed');
          });
        });
      }
      await update();
    },
    update,
    async resync() {
      if (stopped) return;
      forgetDiscovery();
      publisher.invalidate();
      await clearPending();
      await publisher.start();
      await update();
    },
    clearOversizedCommand(topic) {
      if (parseCommandTopic(options.baseTopic, topic) === null || toClear.has(topic)) return;
      toClear.add(topic);
      // A publish that fails (connection down) leaves the topic for the next resync.
      clearOne(topic).catch(() => undefined);
    },
    async stop() {
      stopped = true;
      await publisher.stop();
    },
  };
}
