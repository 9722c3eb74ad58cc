/**
 * Commands are wishes inside the safety envelope: a value the configured device cannot hold is
 * refused (never clamped silently), a horizon is bounded, and a device's commands are
 * rate-limited, with mode changes held to the tank's anti-cycling limits so that a flood of
 * off/boost cannot flap a relay.
 */
import type { DeviceConfig } from '../config/schema.js';
import { WattshiftError } from '../errors.js';
import type { WishCommand } from './home-state.js';

/** A departure or boost further ahead than this is refused. */
export const maxCommandHorizonMs = 7 * 86_400_000;
/** Commands per device per minute of clock time. */
export const commandsPerMinute = 10;

/** What a command may ask of a device: the comfort floor's range, °C, and the car's largest target, kWh. */
export interface CommandRanges {
  floorC?: { min: number; max: number };
  targetKwhMax?: number;
}

/** The ranges {@link checkCommandLimits} holds commands to: Home Assistant's controls offer the same. */
export function commandRanges(device: DeviceConfig): CommandRanges {
  if (device.kind === 'hotWaterTank' || device.kind === 'heatPump') return { floorC: { min: device.model.floorC, max: device.model.maxC - 5 } };
  if (device.kind === 'evCharger') return { targetKwhMax: device.model.capacityKwh };
  return {};
}

/**
 * Throws MQTT_COMMAND_INVALID when the command asks for more than the configured device allows:
 * a floor below the configured comfort floor or within 5 °C of the thermostat, a target above the
 * battery's capacity, a departure in the past or beyond {@link maxCommandHorizonMs}.
 */
export function checkCommandLimits(cmd: WishCommand, device: DeviceConfig, nowMs: number): void {
  const invalid = (message: string): never => {
    throw new WattshiftError('MQTT_COMMAND_INVALID', message, { details: { deviceId: cmd.deviceId } });
  };
  const ranges = commandRanges(device);
  if (ranges.floorC && cmd.floorC !== undefined) {
    if (cmd.floorC < ranges.floorC.min) invalid(`floorC ${cmd.floorC} is below the configured floor of ${ranges.floorC.min} °C`);
    if (cmd.floorC > ranges.floorC.max) invalid(`floorC ${cmd.floorC} must stay 5 °C under the thermostat's ${ranges.floorC.max + 5} °C`);
  }
  if (device.kind === 'evCharger') {
    if (cmd.targetKwh !== undefined && ranges.targetKwhMax !== undefined && cmd.targetKwh > ranges.targetKwhMax) {
      invalid(`targetKwh ${cmd.targetKwh} is above the battery's ${ranges.targetKwhMax} kWh`);
    }
    if (cmd.departure !== undefined) {
      const at = Date.parse(cmd.departure);
      if (!(at > nowMs)) invalid('departure is in the past');
      if (at - nowMs > maxCommandHorizonMs) invalid('departure is more than 7 days ahead');
    }
  }
}

interface DeviceHistory {
  /** Clock times of the commands accepted in the last minute. */
  recent: number[];
  /** Clock times of the mode changes accepted in the last day. */
  modeChanges: number[];
  lastMode: string | undefined;
}

/** Per-device rate limit and anti-cycling of mode changes, on clock time. */
export class CommandGovernor {
  private readonly byDevice = new Map<string, DeviceHistory>();

  /**
   * Records the command if it may go ahead; throws MQTT_COMMAND_LIMITED when the device had
   * {@link commandsPerMinute} commands in the last minute, or when the command changes the mode
   * sooner than the tank's minimum on/off time after the last change or beyond its starts per day.
   */
  admit(cmd: WishCommand, device: DeviceConfig, currentMode: string, nowMs: number): void {
    const h = this.byDevice.get(cmd.deviceId) ?? { recent: [], modeChanges: [], lastMode: undefined };
    this.byDevice.set(cmd.deviceId, h);
    h.recent = h.recent.filter((t) => t > nowMs - 60_000 && t <= nowMs);
    h.modeChanges = h.modeChanges.filter((t) => t > nowMs - 86_400_000 && t <= nowMs);
    const limited = (message: string): never => {
      throw new WattshiftError('MQTT_COMMAND_LIMITED', message, { details: { deviceId: cmd.deviceId } });
    };
    if (h.recent.length >= commandsPerMinute) limited(`more than ${commandsPerMinute} commands a minute for ${cmd.deviceId}`);
    const changesMode = cmd.mode !== undefined && cmd.mode !== currentMode;
    if (changesMode) {
      const { holdMs, perDay } = modeLimits(device);
      const last = h.modeChanges.at(-1);
      // Cancelling a boost hands the device back to the plan, which keeps its own anti-cycling: a
      // person who pressed boost by mistake must not wait for the hold. Boosting again is held.
      const cancelsBoost = cmd.mode === 'auto' && currentMode === 'boost';
      if (last !== undefined && nowMs - last < holdMs && !cancelsBoost) {
        limited(`mode changed ${Math.round((nowMs - last) / 1000)} s ago; it holds for ${Math.round(holdMs / 60_000)} min (anti-cycling)`);
      }
      if (h.modeChanges.length >= perDay) limited(`${perDay} mode changes in the last day already (maxStartsPerDay)`);
      h.modeChanges.push(nowMs);
    }
    h.recent.push(nowMs);
  }
}

/** Least time between two mode changes and most changes a day: the tank's anti-cycling limits. */
function modeLimits(device: DeviceConfig): { holdMs: number; perDay: number } {
  if (device.kind === 'hotWaterTank' || device.kind === 'heatPump') {
    const m = device.model;
    return { holdMs: Math.max(m.minOnMinutes, m.minOffMinutes, 1) * 60_000, perDay: 2 * m.maxStartsPerDay };
  }
  return { holdMs: 60_000, perDay: 96 };
}
