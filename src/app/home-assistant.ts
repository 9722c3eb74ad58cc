/**
 * State, plan, prices and health to MQTT with Home Assistant discovery; commands (mode, boost,
 * departure, target) back the same way. Announced at every connect of the shared MQTT connection.
 */
import type { Module } from '../lifecycle.js';
import type { HomeView } from '../view/model.js';
import { WattshiftError } from '../errors.js';
import { createHaBridge } from '../ha/bridge.js';
import { sharedConnectionPort } from '../ha/port.js';
import { statusPageUrl } from '../status/page-url.js';
import { packageVersion } from '../package-root.js';
import { CommandGovernor, checkCommandLimits } from '../jobs/command-envelope.js';
import type { AppContext } from './context.js';

/** Commands within this much clock time of the first one share one re-plan. */
const commandReplanDelayMs = 10_000;

export function homeAssistantModule(ctx: AppContext, view: () => HomeView): Module {
  const { config, deps, clock, log, counters } = ctx;
  const stopping = new AbortController();
  return {
    name: 'home-assistant',
    async start() {
      const mqtt = ctx.part('mqtt');
      if (!mqtt || !config.mqtt) return;
      const m = config.mqtt;
      const planning = ctx.part('planning');
      const control = ctx.part('control');
      const tracker = ctx.part('tracker');
      const w = ctx.part('wishes');
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
      const bridge = createHaBridge({
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
      ctx.parts.ha = bridge;
      let started = false;
      const announce = (): void => {
        const first = !started;
        started = true;
        void (first ? bridge.start() : bridge.resync()).catch((err) => log.warn({ err, code: 'MQTT_UNAVAILABLE' }, 'home automation not announced'));
      };
      mqtt.onState((state) => {
        if (state === 'up') announce();
      });
      if (mqtt.connected) announce();
    },
    async stop() {
      stopping.abort();
      await ctx.parts.ha?.stop().catch(() => undefined);
    },
  };
}
