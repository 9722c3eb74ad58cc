/**
 * What planning the whole bill needs beside the plan's input: with a tariff that has a capacity
 * fee, the month's capacity step is planned from the main meter's hourly energy this month
 * (`capacityContextOf`, given to `planRequest` on either thread); otherwise the plain planner.
 */
import type { Config } from '../config/schema.js';
import { siteTariff } from '../config/tariff-file.js';
import type { CapacityContext } from '../core/capacity-plan.js';
import type { HourEnergy } from '../core/capacity.js';
import { localParts, localTimeToUtcMs } from '../core/zoned-time.js';
import { codeOf } from '../errors.js';
import type { Logger } from '../log.js';
import type { HourlyEnergyRow } from '../store/types.js';

/** UTC start of the local month containing `ms`. */
export function localMonthStartMs(ms: number, timezone: string): number {
  const p = localParts(ms, timezone);
  return localTimeToUtcMs(p.year, p.month, 1, 0, timezone);
}

/**
 * The location's metered hours from the start of the local month to `nowMs`. Hours marked as a
 * gap carry no trustworthy energy and are left out (a gap cannot set a peak the bill will show).
 */
export function monthHours(rows: ReadonlyArray<Pick<HourlyEnergyRow, 'hourStartMs' | 'kwh' | 'quality'>>): HourEnergy[] {
  return rows.filter((r) => r.quality !== 'gap' && Number.isFinite(r.kwh)).map((r) => ({ startMs: r.hourStartMs, kWh: r.kwh }));
}

export interface BillPlannerDeps {
  config: Pick<Config, 'site'>;
  /** Hourly energy of the location ('location' subject) in [fromMs, toMs). */
  readLocationHours: (fromMs: number, toMs: number) => ReadonlyArray<HourlyEnergyRow>;
  logger: Logger;
}

/**
 * With a tariff that has a capacity fee, what the capacity planner needs at `nowMs`: the rule and
 * the main meter's hours of the month so far (read here, on the caller's thread, so that the plan
 * itself can be made on the planner's thread); null without such a tariff.
 */
export function capacityContextOf(deps: BillPlannerDeps): ((nowMs: number) => CapacityContext) | null {
  const tariff = siteTariff(deps.config);
  const rule = tariff?.capacity;
  if (!tariff || !rule) return null;
  const log = deps.logger.child({ component: 'capacity' });
  const timezone = deps.config.site.timezone;
  return (nowMs) => {
    let metered: HourEnergy[] = [];
    try {
      metered = monthHours(deps.readLocationHours(localMonthStartMs(nowMs, timezone), nowMs + 3_600_000));
    } catch (err) {
      // Planning goes on: the month's peaks so far are taken as unknown (none), which can only
      // make the plan hold less, never leave the tank or the car short.
      log.warn({ code: codeOf(err, 'STORE_FAILED'), err }, "month's metered peaks unreadable; planning the capacity step without them");
    }
    return { rule, timezone, holidays: tariff.holidays, meteredHours: metered, vatRate: 1 + tariff.vatPct / 100 };
  };
}
