/**
 * The week-long home round the year: what changes with the seasons and what the programme sends.
 * The house's own draw is a seeded year of house load (house-load.ts: a daily shape, electric
 * heating the planner does not control, weather); the hot water drawn from each tank is EN 16147's
 * "M" cycle scaled by the season (colder inlet water and longer showers in winter) and by the day;
 * each week brings a capacity cap on a weekday evening and a price-curve delta on the flexible
 * devices. Prices are the API sandbox's seeded year (spot-prices.ts: shapes and levels measured on
 * the Nordic extracts in data/prices/, which hold weeks, not a year). Pure: the same seed gives
 * the same year.
 */
import { rng } from '../core/prng.js';
import { localAt } from '../demo/environment.js';
import { profileMDraws } from '../sandbox/devices/tank-physics.js';
import type { Seasons } from './homes/week.js';
import { houseLoad } from './house-load.js';

const DAY_MS = 86_400_000;
const STEP_MS = 10 * 60_000;
const H = 3_600_000;

/** A cap on the whole home: at most `maxKw` over [fromMs, toMs), posted at `postMs`. */
export interface YearCap {
  kind: 'cap';
  postMs: number;
  fromMs: number;
  toMs: number;
  maxKw: number;
}

/** A price-curve delta on the flexible devices over [fromMs, toMs), per kWh (negative: paid to use). */
export interface YearDelta {
  kind: 'delta';
  postMs: number;
  fromMs: number;
  toMs: number;
  deltaPerKwh: number;
}

export type YearEvent = YearCap | YearDelta;

/** Day of the year of a UTC instant (0 on 1 January). */
const dayOfYear = (ms: number): number => Math.floor((ms - Date.UTC(new Date(ms).getUTCFullYear(), 0, 1)) / DAY_MS);

/** The seasons of `days` days from `startMs` (see the top of this file). */
export function yearSeasons(startMs: number, days: number, seed: number, timezone: string): Seasons {
  const load = houseLoad({ startMs, days: days + 1, timezone, seed });
  const random = rng(seed * 7919 + 1);
  // One factor a day, drawn in order: the same seed gives the same draws however long the run.
  const dayFactor = Array.from({ length: days + 2 }, () => 0.8 + 0.4 * random());
  return {
    weeks: Math.ceil(days / 7) + 1,
    houseW: (atMs) => {
      const i = Math.min(load.steps.length - 1, Math.max(0, Math.floor((atMs - startMs) / STEP_MS)));
      return load.steps[i]!.kw * 1000;
    },
    drawsOn: (dayMs) => {
      const d = Math.max(0, Math.floor((dayMs - startMs) / DAY_MS) + 1);
      // 1.25 in mid-January, 0.75 in mid-July.
      const season = 1 + 0.25 * Math.cos((2 * Math.PI * (dayOfYear(dayMs) - 15)) / 365);
      const scale = season * (dayFactor[d] ?? 1);
      return profileMDraws.map((x) => ({ minuteOfDay: x.minuteOfDay, kwh: x.kwh * scale }));
    },
    tariff: 'elvia',
  };
}

/**
 * Each week from `startMs` (day 0 its Sunday): a cap of 4–6 kW from 17:00 to 20:00 on a weekday,
 * posted at 10:00 that day, and a delta of −0.2 to −1.0 per kWh over three hours of a night or a
 * midday, posted the evening before. The first week's cap is on its Sunday (posted at 13:00, an
 * hour after the start) and its delta on Monday night, so a one-day run has both.
 */
export function yearEvents(startMs: number, days: number, seed: number): YearEvent[] {
  const random = rng(seed * 104_729 + 3);
  const events: YearEvent[] = [];
  for (let week = 0; week * 7 < days; week++) {
    const first = week === 0;
    const capDay = week * 7 + 1 + Math.floor(random() * 5);
    const maxKw = 4 + Math.round(random() * 4) / 2;
    const cap = first ? { day: 0, postHour: 13 } : { day: capDay, postHour: 10 };
    events.push({
      kind: 'cap',
      postMs: localAt(startMs, cap.day, cap.postHour),
      fromMs: localAt(startMs, cap.day, 17),
      toMs: localAt(startMs, cap.day, 20),
      maxKw,
    });
    const deltaDay = first ? 1 : week * 7 + 1 + Math.floor(random() * 6);
    const night = random() < 0.5;
    const fromHour = first || night ? 1 : 11;
    const deltaPerKwh = -Math.round((0.2 + 0.8 * random()) * 100) / 100;
    const fromMs = localAt(startMs, deltaDay, fromHour);
    events.push({ kind: 'delta', postMs: localAt(startMs, deltaDay - 1, 20), fromMs, toMs: fromMs + 3 * H, deltaPerKwh });
  }
  const endMs = startMs + days * DAY_MS;
  return events.filter((e) => e.postMs < endMs).sort((a, b) => a.postMs - b.postMs);
}
