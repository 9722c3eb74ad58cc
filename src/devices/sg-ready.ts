/**
 * A heat pump's SG Ready input on two relay outputs (switched on = contact closed, so an unpowered
 * or released relay is an open contact and both open is normal operation, "0:0").
 *
 * The order of the writes keeps every state in between harmless: contacts that open are opened
 * before any closes, contact 1 first; contacts that close are closed contact 2 first. So a change
 * never passes through the start command "1:1" or the utility lock "1:0" unless that is where it
 * starts or ends: "1:0" → "0:1" goes through "0:0", "0:0" → "1:1" through "0:1" (a recommendation,
 * not a lock, which some pumps follow with a restart delay), "1:1" → "0:0" through "0:1".
 *
 * A closed contact is (re)written on every call, which renews its device-side lease (a release
 * timer, Shelly `toggle_after`, Tasmota `PulseTime`); an open one only when not known open.
 */
import { sgContacts, type SgState } from '../core/heat-pump.js';
import type { HeaterSwitch, SgReadyInput } from '../ports.js';

/** A relay output as a contact: `block` closes it (with a lease), `allow` opens it. */
export type ContactRelay = HeaterSwitch;

export function createSgReadyInput(relay1: ContactRelay, relay2: ContactRelay, swapped = false): SgReadyInput {
  // contacts[0] is SG Ready contact 1 (the lock), contacts[1] contact 2.
  const contacts = swapped ? ([relay2, relay1] as const) : ([relay1, relay2] as const);
  /** Whether each contact is known closed (true), open (false) or unknown. */
  const known: (boolean | undefined)[] = [undefined, undefined];

  const write = async (i: 0 | 1, closed: boolean, leaseMs: number, signal: AbortSignal): Promise<void> => {
    if (!closed && known[i] === false) return;
    known[i] = undefined;
    if (closed) await contacts[i].block(leaseMs, signal);
    else await contacts[i].allow(signal);
    known[i] = closed;
  };

  return {
    deviceLease: relay1.deviceLease && relay2.deviceLease,
    async setState(state: SgState, leaseMs: number, signal: AbortSignal) {
      const [c1, c2] = sgContacts[state];
      if (!c1) await write(0, false, leaseMs, signal);
      if (!c2) await write(1, false, leaseMs, signal);
      if (c2) await write(1, true, leaseMs, signal);
      if (c1) await write(0, true, leaseMs, signal);
    },
  };
}
