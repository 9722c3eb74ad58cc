import { z } from 'zod';
import type { Store } from '../store/types.js';
import type { DeviceMode } from '../core/control.js';
import type { DeviceIntent } from './control-loop.js';
import { zonePresetNames, type ZonePresetName } from '../config/schema-zone.js';

/** What a user asked for, per device, over MQTT; kept across restarts. */
export interface DeviceWishes {
  mode: DeviceMode;
  boostUntilMs: number | null;
  floorC: number | null;
  departureMs: number | null;
  targetKwh: number | null;
  targetSocPct: number | null;
  /** A heated zone's preset (absent: `comfort`, its schedule). */
  preset?: ZonePresetName;
}

const wishesSchema = z.strictObject({
  mode: z.enum(['auto', 'off', 'boost']),
  boostUntilMs: z.number().nullable(),
  floorC: z.number().nullable(),
  departureMs: z.number().nullable(),
  targetKwh: z.number().nullable(),
  targetSocPct: z.number().nullable(),
  preset: z.enum(zonePresetNames).optional(),
});

const noWishes: DeviceWishes = { mode: 'auto', boostUntilMs: null, floorC: null, departureMs: null, targetKwh: null, targetSocPct: null };

/** A command as the home-automation layer validated it. */
export interface WishCommand {
  deviceId: string;
  mode?: DeviceMode | undefined;
  boostMinutes?: number | undefined;
  departure?: string | undefined;
  targetKwh?: number | undefined;
  targetSocPct?: number | undefined;
  floorC?: number | undefined;
  preset?: ZonePresetName | undefined;
}

/**
 * Applies a command to the wishes: a pure step, so it is tested without MQTT. A value that is not
 * a finite number (or a departure that is not a date) is ignored, so nothing unreadable is ever
 * persisted.
 */
export function applyCommand(w: DeviceWishes, cmd: WishCommand, nowMs: number, defaultBoostMinutes = 60): DeviceWishes {
  const next = { ...w };
  const num = (v: number | undefined): number | undefined => (v !== undefined && Number.isFinite(v) ? v : undefined);
  // A boost lasts at most a day, whatever a caller that skipped validation asked for.
  const rawBoost = num(cmd.boostMinutes);
  const boostMinutes = rawBoost === undefined ? undefined : Math.min(Math.max(rawBoost, 1), 24 * 60);
  if (cmd.mode !== undefined) {
    next.mode = cmd.mode;
    next.boostUntilMs = cmd.mode === 'boost' ? nowMs + (boostMinutes ?? defaultBoostMinutes) * 60_000 : null;
  } else if (boostMinutes !== undefined) {
    next.mode = 'boost';
    next.boostUntilMs = nowMs + boostMinutes * 60_000;
  }
  const floorC = num(cmd.floorC);
  if (floorC !== undefined) next.floorC = floorC;
  const departureMs = cmd.departure === undefined ? undefined : num(Date.parse(cmd.departure));
  if (departureMs !== undefined) next.departureMs = departureMs;
  const targetKwh = num(cmd.targetKwh);
  if (targetKwh !== undefined) next.targetKwh = targetKwh;
  const targetSocPct = num(cmd.targetSocPct);
  if (targetSocPct !== undefined) next.targetSocPct = targetSocPct;
  if (cmd.preset !== undefined && zonePresetNames.includes(cmd.preset)) next.preset = cmd.preset;
  return next;
}

/** The user's wishes of every device, persisted in the store's key/value state. */
export class Wishes {
  private readonly byDevice = new Map<string, DeviceWishes>();

  constructor(
    private readonly store: Pick<Store, 'getState' | 'setState'>,
    deviceIds: readonly string[],
  ) {
    for (const id of deviceIds) this.byDevice.set(id, store.getState(`wishes:${id}`, wishesSchema) ?? { ...noWishes });
  }

  get(deviceId: string): DeviceWishes {
    return this.byDevice.get(deviceId) ?? noWishes;
  }

  /** The mode in force now: a boost that ran out is back to auto. */
  intent(deviceId: string, nowMs: number): DeviceIntent {
    const w = this.get(deviceId);
    if (w.mode === 'boost' && w.boostUntilMs !== null && w.boostUntilMs <= nowMs) return { mode: 'auto', boostUntilMs: null };
    return { mode: w.mode, boostUntilMs: w.boostUntilMs };
  }

  /**
   * A car left the charger: what was asked for that car's session (departure, targets, a boost)
   * ends with it, so the next car is planned from its own schedule. A charger switched off stays off.
   */
  endSession(deviceId: string): void {
    const w = this.get(deviceId);
    const next: DeviceWishes = {
      ...w,
      departureMs: null,
      targetKwh: null,
      targetSocPct: null,
      ...(w.mode === 'boost' ? { mode: 'auto', boostUntilMs: null } : {}),
    };
    if (JSON.stringify(next) === JSON.stringify(w)) return;
    this.store.setState(`wishes:${deviceId}`, next);
    this.byDevice.set(deviceId, next);
  }

  apply(cmd: WishCommand, nowMs: number): DeviceWishes {
    const next = applyCommand(this.get(cmd.deviceId), cmd, nowMs);
    this.store.setState(`wishes:${cmd.deviceId}`, next);
    this.byDevice.set(cmd.deviceId, next);
    return next;
  }
}
