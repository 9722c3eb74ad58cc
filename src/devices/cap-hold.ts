/**
 * What each configured device can hold of a cap without wattshift, for the acknowledgement rule
 * (`core/cap-hold.ts`) and `wattshift check`. The table in docs/caps.md says the same per family.
 */
import type { DeviceConfig } from '../config/schema.js';
import type { DeviceHold } from '../core/cap-hold.js';
import type { DeviceCapabilities } from './supervisor.js';
import { loadProfile } from './modbus/profiles.js';
import { ocppCapHoldMaxMs } from './ocpp/ocpp-charger.js';
import { shellyMaxLeaseMs } from './mqtt/shelly.js';
import { tasmotaMaxLeaseMs, tasmotaRuleMaxLeaseMs } from './mqtt/tasmota.js';

/** Most a device draws, kW; undefined for a meter. */
export function ratedKwOf(d: DeviceConfig): number | undefined {
  if (d.kind === 'hotWaterTank') return d.model.elementKw;
  if (d.kind === 'heatPump') return d.model.electricKw;
  if (d.kind === 'zone') return d.model.powerKw;
  if (d.kind === 'evCharger') return (d.model.maxCurrentA * d.model.phases * d.model.voltageV) / 1000;
  return undefined;
}

/**
 * Longest cap window the device holds by itself, ms: a heater relay with a timer of its own (Shelly
 * `toggle_after`, Tasmota `PulseTime` with blocked = ON or its release rule's `RuleTimer`, a Modbus
 * release-timer register) up to that timer's largest setting; a charger as its adapter states
 * (`chargerHoldsCapMs`). A heat pump's SG Ready lock is not held past the lease (lock budgets), nor
 * is any relay without a timer: 0.
 */
export function holdsByItselfMs(d: DeviceConfig, caps: DeviceCapabilities): number {
  if (d.kind === 'hotWaterTank' || d.kind === 'zone') return caps.heaterSwitch?.deviceLease ? (caps.heaterSwitch.maxLeaseMs ?? 0) : 0;
  if (d.kind === 'evCharger') return caps.chargerHoldsCapMs?.() ?? 0;
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

/**
 * What a configured device can hold of a cap by itself, from its config alone (for `wattshift
 * check`): the same answer as {@link holdsByItselfMs} gives the running daemon, with the reason.
 * Undefined for a meter.
 */
export function capHoldOfConfig(d: DeviceConfig, options: { baseDir?: string } = {}): { holdsMs: number; why: string } | undefined {
  if (d.kind === 'meter' || d.kind === 'solar') return undefined;
  if (d.kind === 'heatPump') return { holdsMs: 0, why: 'an SG Ready lock is a short lease on purpose' };
  if (d.kind === 'zone' && d.thermostat)
    return { holdsMs: 0, why: "a thermostat's setpoint limits the temperature, not the power: it cannot hold a cap below the heater's power" };
  if (d.kind === 'evCharger') {
    const source = d.charger;
    if (source?.type === 'ocpp') return { holdsMs: ocppCapHoldMaxMs, why: 'an OCPP ChargePointMaxProfile with validTo' };
    if (source?.type === 'modbus') {
      const commLoss = profileOf(source.profile, options)?.commLoss;
      if (commLoss?.currentA === 0)
        return {
          holdsMs: Number.POSITIVE_INFINITY,
          why: `profile ${source.profile}: it stops charging ${commLoss.afterS} s after wattshift goes silent, and charges again only when wattshift returns`,
        };
    }
    return { holdsMs: 0, why: `${source?.type ?? 'this'} charger has no timed limit wattshift can set` };
  }
  const s = d.switch;
  if (!s) return { holdsMs: 0, why: 'no switch' };
  if (s.type === 'shelly') return { holdsMs: shellyMaxLeaseMs, why: 'Shelly toggle_after' };
  if (s.type === 'tasmota') {
    if (s.blockedState === 'on') return { holdsMs: tasmotaMaxLeaseMs, why: 'Tasmota PulseTime' };
    if (s.releaseRule)
      return { holdsMs: tasmotaRuleMaxLeaseMs, why: `Tasmota RuleTimer${s.releaseRule.timer} with the release rule in Rule${s.releaseRule.rule}` };
    return {
      holdsMs: 0,
      why: 'Tasmota blocking with OFF has no timer (releaseRule, or blockedState: on with the heater on the normally-closed contact, gives it one)',
    };
  }
  if (s.type === 'modbus') {
    const profile = profileOf(s.profile, options);
    if (!profile) return undefined; // a profile that does not load is reported by the profile checks
    const lease = profile.relayLease;
    return lease
      ? { holdsMs: lease.maxS * 1000, why: `the release timer of profile ${s.profile}` }
      : { holdsMs: 0, why: `profile ${s.profile} has no release timer` };
  }
  return { holdsMs: 0, why: 'a relay on mapped topics has no timer' };
}

function profileOf(name: string, options: { baseDir?: string }): ReturnType<typeof loadProfile> | undefined {
  try {
    return loadProfile(name, options);
  } catch {
    return undefined;
  }
}
