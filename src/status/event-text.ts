/**
 * What an event is, in words, for the status page and `wattshift status`: its kind, what it sets
 * and when. The API's event id is left to the machine-readable views (a page's title attribute,
 * `--json`, `/api/view`), where the partner's support finds it.
 */
import type { EventView } from '../view/model.js';
import { dateTime, fixed, hhmm } from './format.js';

const kinds: Record<string, string> = {
  PriceCurve: 'Price incentive',
  LocationLPC: 'Power limit on the home',
  LPC: 'Power limit on the home',
  ResourceLPC: 'Power limit on a device',
  LPCReservation: 'Power limit reserved',
  UserEligibility: "Change to the programme's members",
};

/** The kind of event an API payload type names (`LocationLPC` → "Power limit on the home"). */
export function eventKind(type: string): string {
  return kinds[type] ?? `Event of type ${type}`;
}

/** `2026-03-02 17:00 → 19:00` (the end's date only when it is another day). */
export function windowText(startMs: number | null, endMs: number | null, timezone: string): string {
  if (startMs === null || endMs === null) return '';
  const end = dateTime(endMs, timezone);
  const start = dateTime(startMs, timezone);
  return `${start} → ${end.slice(0, 10) === start.slice(0, 10) ? hhmm(endMs, timezone) : end}`;
}

function range(r: { min: number; max: number }, digits: number): string {
  return r.min === r.max ? fixed(r.min, digits) : `${fixed(r.min, digits)} to ${fixed(r.max, digits)}`;
}

/** What the event sets on this home: its cap, or its price deltas as a reward or a surcharge. */
function setsText(e: EventView, names: Readonly<Record<string, string>>): string {
  if (e.capKw) {
    const on = e.deviceIds && e.deviceIds.length > 0 ? ` on ${e.deviceIds.map((id) => names[id] ?? id).join(', ')}` : '';
    return `at most ${range(e.capKw, 1)} kW${on}`;
  }
  const d = e.priceDelta;
  if (!d) return '';
  if (d.max <= 0) return `a reward of ${range({ min: -d.max, max: -d.min }, 3)} ${d.unit} off the price`;
  if (d.min >= 0) return `a surcharge of ${range(d, 3)} ${d.unit} on the price`;
  return `from ${fixed(-d.min, 3)} ${d.unit} off to ${fixed(d.max, 3)} ${d.unit} on the price`;
}

/** `Power limit on a device: at most 0.0 kW on Hot water tank, 2026-03-02 17:00 → 19:00`. */
export function eventText(e: EventView, timezone: string, names: Readonly<Record<string, string>> = {}): string {
  const parts = [setsText(e, names), windowText(e.startMs, e.endMs, timezone)].filter((p) => p !== '');
  return `${eventKind(e.type)}${parts.length > 0 ? `: ${parts.join(', ')}` : ''}`;
}
