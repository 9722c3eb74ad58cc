/** An LPC reservation and what the plan did about it, in one line: for `plan --explain` and the status page. */
import type { ReservationView } from '../view/model.js';
import { dayLabel, fixed, hhmm } from './format.js';

export function reservationText(r: ReservationView, tz: string): string {
  const window = `${dayLabel(r.startMs, tz)} ${hhmm(r.startMs, tz)}–${hhmm(r.endMs, tz)}`;
  const head = `Reserved: the home may be capped at ${fixed(r.maxKw, 1)} kW ${window} (LPC reservation, not acknowledged)`;
  return r.kept
    ? `${head}; planned for: tank and car take ${fixed(r.beforeKwh, 1)} kWh before it and ${fixed(r.insideKwh, 1)} kWh in it`
    : `${head}; not planned for: keeping it would leave a need short, so the plan takes ${fixed(r.insideKwh, 1)} kWh in it`;
}
