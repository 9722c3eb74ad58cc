import type { HomeView } from '../view/model.js';
import { fixed } from './format.js';

/**
 * The plan report in one line, for the status page and `wattshift status`: the last one the API
 * accepted (when, why, its hours and their sums) and whether a newer one waits. Null when plan
 * reports are not sent.
 */
export function planReportText(outbox: HomeView['outbox'], time: (ms: number) => string): string | null {
  if (outbox.planReportPending === undefined) return null;
  const r = outbox.lastPlanReport;
  const waiting = outbox.planReportPending ? '; a newer one waits to be sent' : '';
  if (!r) return `Plan report: none accepted yet${waiting}`;
  return (
    `Plan report: accepted ${time(r.acceptedMs)} (${r.reason}), ${r.hours} h from ${time(r.fromMs)} to ${time(r.toMs)}: ` +
    `baseline ${fixed(r.baselineKwh, 1)} kWh, flexibility ${fixed(r.flexibilityKwh, 1)} kWh${waiting}`
  );
}
