/**
 * What each configured device can hold of a cap without wattshift, for the acknowledgement rule
 * (`core/cap-hold.ts`) and `wattshift check`. The table in docs/caps.md says the same per family.
 */
import type { DeviceConfig } from '../config/schema.js';
import type { DeviceHold } from '../core/cap-hold.js';
import type { DeviceCapabilities } from './supervisor.js';

/** Most a device draws, kW; undefined for a meter. */
export function ratedKwOf(d: DeviceConfig): number | undefined {
  if (d.kind === 'hotWaterTank') return d.model.elementKw;
  if (d.kind === 'heatPump') return d.model.electricKw;
  if (d.kind === 'evCharger') return (d.model.maxCurrentA * d.model.phases * d.model.voltageV) / 1000;
  return undefined;
}

/**
 * Longest cap window the device holds by itself, ms: a heater relay with a timer of its own (Shelly
 * `toggle_after`, Tasmota `PulseTime` with blocked = ON, a Modbus release-timer register) up to
 * that timer's largest setting; a charger as its adapter states (`chargerHoldsCapMs`). A heat pump's SG
 * Ready lock is not held past the lease (lock budgets), nor is any relay without a timer: 0.
 */
export function holdsByItselfMs(d: DeviceConfig, caps: DeviceCapabilities): number {
  if (d.kind === 'hotWaterTank') return caps.heaterSwitch?.deviceLease ? caps.heaterSwitch.maxLeaseMs ?? 0 : 0;
  if (d.kind === 'evCharger') return caps.chargerHoldsCapMs ?? 0;
  return 0;
}

/** The device's stand toward a cap; undefined for a meter. */
export function deviceHoldOf(d: DeviceConfig, caps: DeviceCapabilities, up: boolean): DeviceHold | undefined {
  const ratedKw = ratedKwOf(d);
  if (ratedKw === undefined) return undefined;
  // Without wattshift a device that does not hold the block draws what it is rated for: a relay
  // falls back to heating, a charger keeps (or is handed back) its own current.
  return { up, ratedKw, holdsByItselfMs: holdsByItselfMs(d, caps), unheldKw: ratedKw };
}
