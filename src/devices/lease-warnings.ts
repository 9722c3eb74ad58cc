/**
 * Which configured heater switches cannot end a block by themselves (no device-side lease): a
 * block written to them outlasts a crash or an outage of the daemon until the device loses power.
 * `wattshift check` warns about each, with the wiring that keeps such a relay safe.
 */
import type { Config, HeatPumpConfig } from '../config/schema.js';
import { loadProfile } from './modbus/profiles.js';

/** Profile paths in a loaded config are absolute already; a profile that does not load is the daemon's to report. */
function profileHasLease(profile: string): boolean {
  try {
    return loadProfile(profile).relayLease !== undefined;
  } catch {
    return true;
  }
}

export function switchesWithoutLease(config: Config): string[] {
  const out: string[] = [];
  for (const d of config.devices) {
    if (d.kind === 'heatPump') {
      out.push(...contactsWithoutLease(d));
      continue;
    }
    if (d.kind !== 'hotWaterTank' || !d.switch) continue;
    const s = d.switch;
    let leased: boolean;
    if (s.type === 'modbus') leased = profileHasLease(s.profile);
    else if (s.type === 'shelly')
      leased = true; // toggle_after
    // Tasmota blocking with OFF: its PulseTime cannot end that; blocking with ON it can. A topic map has no timer.
    else leased = s.type === 'tasmota' && (s.blockedState === 'on' || s.releaseRule !== undefined);
    if (!leased) {
      out.push(
        `devices.${d.id}.switch: the relay has no timer, so a block outlasts an outage or crash of wattshift; ` +
          'wire the heater through its normally-closed contact (de-energised = heating allowed)',
      );
    }
  }
  return out;
}

/**
 * A heat pump's relays close their contacts when switched on, so a Tasmota relay's PulseTime ends
 * a closed contact (on), as Shelly's toggle_after does; a Modbus board needs a release timer and a
 * topic map has none. A lock without a timer still ends on the pump after 2 hours (SG Ready), a
 * boost or start command does not.
 */
function contactsWithoutLease(d: HeatPumpConfig): string[] {
  return (['relay1', 'relay2'] as const).flatMap((key) => {
    const s = d.contacts[key];
    const leased = s.type === 'modbus' ? profileHasLease(s.profile) : s.type !== 'mqtt';
    return leased
      ? []
      : [
          `devices.${d.id}.contacts.${key}: the relay has no timer, so a closed contact (a boost, a start command, a lock until the pump ends it after 2 hours) outlasts an outage or crash of wattshift; ` +
            "wire the SG Ready contact through the relay's normally-open contact (de-energised = normal operation)",
        ];
  });
}
