/**
 * State, plan, prices and health to MQTT with Home Assistant discovery; commands (mode, boost,
 * departure, target) back the same way. Announced at every connect of the shared MQTT connection.
 */
import type { Module } from '../lifecycle.js';
import type { MqttConnection } from '../devices/mqtt/index.js';
import type { HomeView } from '../view/model.js';
import { WattshiftError } from '../errors.js';
import { createHaBridge, type HaBridge } from '../ha/bridge.js';
import { sharedConnectionPort } from '../ha/port.js';
import { statusPageUrl } from '../status/page-url.js';
import { packageVersion } from '../package-root.js';
import { CommandGovernor, checkCommandLimits } from '../jobs/command-envelope.js';
import type { AppContext } from './context.js';
import type { HomeParts } from './home.js';
import type { Planning } from './planning.js';
import type { ControlLoop } from './control.js';

export interface HomeAssistantNeeds extends Pick<HomeParts, 'tracker' | 'wishes'> {
  mqtt: MqttConnection | null;
  planning: Planning;
  control: ControlLoop;
  view: () => HomeView;
}

/** Commands within this much clock time of the first one share one re-plan. */
const commandReplanDelayMs = 10_000;

export function homeAssistantModule(ctx: AppContext, needs: HomeAssistantNeeds): Module {
  const { config, deps, clock, log, counters, bus } = ctx;
  const stopping = new AbortController();
  let bridge: HaBridge | undefined;
  const offs: Array<() => void> = [];
  return {
    name: 'home-assistant',
    async start() {
      const { mqtt, planning, control, tracker, wishes: w, view } = needs;
      if (!mqtt || !config.mqtt) return;
      const m = config.mqtt;
      const governor = new CommandGovernor();
      // A burst of commands makes one re-plan, a few seconds after its first command.
      let replanQueued = false;
      const replanSoon = (reason: string): void => {
        if (replanQueued) return;
        replanQueued = true;
        void clock
          .sleep(commandReplanDelayMs, stopping.signal)
          .then(
            () => planning.request(reason),
            () => undefined,
          )
          .finally(() => (replanQueued = false));
      };
      const pageUrl = statusPageUrl(config.http);
      const b = createHaBridge({
        port: sharedConnectionPort(mqtt),
        baseTopic: m.baseTopic,
        discovery: m.discovery,
        currency: config.site.currency,
        swVersion: packageVersion(),
        ...(pageUrl ? { configurationUrl: pageUrl } : {}),
        logger: deps.logger,
        getView: view,
        onCommand: async (cmd) => {
          const device = config.devices.find((d) => d.id === cmd.deviceId);
          if (!device) throw new WattshiftError('MQTT_COMMAND_INVALID', `unknown device '${cmd.deviceId}'`);
          const now = clock.nowMs();
          checkCommandLimits(cmd, device, now);
          governor.admit(cmd, device, w.intent(cmd.deviceId, now).mode, now);
          w.apply(cmd, now);
          replanSoon(`command for ${cmd.deviceId}`);
          control.wake();
        },
        onRefused: (code) => counters.refused('command', code),
        onCommandOutcome: (ok) => counters.command(ok),
        previousDeviceIds: tracker.announcedDevices(),
        saveDeviceIds: (ids) => tracker.saveAnnouncedDevices(ids),
      });
      bridge = b;
      // The planner, the control loop and the MQTT connection started earlier: they tell the bridge over the bus.
      offs.push(
        bus.on('viewChanged', () => void b.update().catch(() => undefined)),
        bus.on('mqttOversized', ({ topic }) => b.clearOversizedCommand(topic)),
      );
      let started = false;
      const announce = (): void => {
        const first = !started;
        started = true;
        void (first ? b.start() : b.resync()).catch((err) => log.warn({ err, code: 'MQTT_UNAVAILABLE' }, 'home automation not announced'));
      };
      mqtt.onState((state) => {
        if (state === 'up') announce();
      });
      if (mqtt.connected) announce();
    },
    async stop() {
      stopping.abort();
      for (const off of offs.splice(0)) off();
      await bridge?.stop().catch(() => undefined);
    },
  };
}
