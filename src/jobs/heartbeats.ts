/**
 * Feeds the watchdogs some chargers keep (a Modbus register the charger wants written every few
 * seconds, declared as `heartbeat` in the device's profile): a charger that is not fed falls back
 * to its own safe state, so a stopped daemon stops the feeding and the charger protects itself.
 * Writing at the watchdog's pace is the one periodic write wattshift makes; everything else is
 * written on change.
 */
import { codeOf, WattshiftError } from '../errors.js';
import type { Logger } from '../log.js';
import type { Clock } from '../ports.js';
import type { ModbusHeartbeat } from '../devices/modbus/modbus-device.js';
import { startLoop, type LoopHandle } from '../timing/loop.js';

export interface FedWatchdog {
  device: string;
  heartbeat: ModbusHeartbeat;
}

export function startHeartbeats(watchdogs: readonly FedWatchdog[], deps: { clock: Clock; logger: Logger }): LoopHandle | null {
  if (watchdogs.length === 0) return null;
  const log = deps.logger.child({ component: 'heartbeats' });
  const nextMs = watchdogs.map(() => deps.clock.nowMs());
  const shortestMs = Math.min(...watchdogs.map((w) => w.heartbeat.everyMs));
  return startLoop({
    name: 'heartbeats',
    clock: deps.clock,
    logger: log,
    errorDelayMs: shortestMs,
    async tick(signal) {
      const failed: string[] = [];
      let lastError: unknown;
      for (const [i, w] of watchdogs.entries()) {
        if (deps.clock.nowMs() < nextMs[i]!) continue;
        try {
          await w.heartbeat.beat(signal); // the bus bounds each request with its own timeout
          nextMs[i] = deps.clock.nowMs() + w.heartbeat.everyMs;
        } catch (err) {
          // Tried again at the next tick; the charger's own watchdog decides when it gives up on us.
          failed.push(w.device);
          lastError = err;
        }
      }
      if (failed.length > 0) {
        const code = codeOf(lastError, 'DEVICE_UNREACHABLE');
        throw new WattshiftError(code, `watchdog not fed: ${failed.join(', ')}`, { cause: lastError, details: { devices: failed } });
      }
      return Math.max(0, Math.min(...nextMs) - deps.clock.nowMs());
    },
  });
}
