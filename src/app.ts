import type { Config } from './config/schema.js';
import type { Clock } from './ports.js';
import type { Logger } from './log.js';
import { systemClock } from './clock.js';

export interface AppDeps {
  logger: Logger;
  clock?: Clock;
}

export interface App {
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** Composition root: builds every part of the daemon from the config. */
export function buildApp(config: Config, deps: AppDeps): App {
  const log = deps.logger.child({ component: 'app' });
  const clock = deps.clock ?? systemClock;
  return {
    async start() {
      log.info({ devices: config.devices.length, atMs: clock.nowMs() }, 'wattshift started');
    },
    async stop() {
      log.info('wattshift stopped');
    },
  };
}
