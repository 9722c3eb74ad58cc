/**
 * Which configured heater switches cannot end a block by themselves (no device-side lease): a
 * block written to them outlasts a crash or an outage of the daemon until the device loses power.
 * `wattshift check` warns about each, with the wiring that keeps such a relay safe.
 */
import type { Config } from '../config/schema.js';
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
    if (d.kind !== 'hotWaterTank' || !d.switch) continue;
    const s = d.switch;
    let leased: boolean;
    if (s.type === 'modbus') leased = profileHasLease(s.profile);
    else if (s.type === 'shelly') leased = true; // toggle_after
    else leased = false; // Tasmota blocks with OFF, which its PulseTime cannot end; a topic map has no timer
    if (!leased) {
      out.push(`devices.${d.id}.switch: the relay has no timer, so a block outlasts an outage or crash of wattshift; ` +
        'wire the heater through its normally-closed contact (de-energised = heating allowed)');
    }
  }
  return out;
}
