/** The History part of `wattshift status`: the text lines for the energy history (status/history.ts). */
import type { PeriodEnergy } from '../core/energy-history.js';
import { fixed } from '../status/format.js';
import { periodsWithData, type EnergyHistory, type HistoryRow } from '../status/history.js';

/** Days shown in the terminal (all of them are in `--json`). */
const TEXT_DAYS = 7;

function cell(e: PeriodEnergy | undefined): string {
  if (!e || e.hours === 0) return '–';
  if (e.quality === 'gap') return 'no data';
  return `${fixed(e.kwh, 1)} kWh${e.quality === 'partial' ? ` (partial: ${e.completeHours}/${e.hours} h)` : ''}`;
}

function moneyText(m: HistoryRow['money'], currency: string): string {
  if (!m || m.hours === 0) return '';
  if (m.quality === 'gap') return '; not priced';
  const partial = m.quality === 'partial' ? ` (partial: ${m.pricedHours}/${m.hours} h priced)` : '';
  return `; cost ${fixed(m.cost, 2)} ${currency}, incentive ${fixed(m.incentive, 2)} ${currency}, saved ${fixed(m.savings, 2)} ${currency}${partial}`;
}

function periodLines(rows: readonly HistoryRow[], history: EnergyHistory, devices: EnergyHistory['devices']): string[] {
  return rows.map(
    (r) => `  ${r.label}  ${devices.map((d) => `${d.name}: ${cell(r.energy[d.id])}`).join('; ')}${moneyText(r.money, history.currency)}`,
  );
}

/** Lines for the terminal; "partial" figures are lower bounds. */
export function renderHistory(history: EnergyHistory): string[] {
  if (history.devices.length === 0) return ['History: no devices configured'];
  const names = Object.fromEntries(history.devices.map((d) => [d.id, d.name]));
  const devices = history.devices.map((d) => (d.wholeHome ? { ...d, name: `${d.name} (whole home)` } : d));
  const days = periodsWithData(history.days.slice(0, TEXT_DAYS));
  const months = periodsWithData(history.months);
  if (days.length === 0 && months.length === 0) return ["History: nothing metered yet (it fills in hour by hour once the devices' energy is read)"];
  const out = ['History (metered energy; partial = some hours missing or partly metered, a lower bound):'];
  out.push(days.length > 0 ? ' days:' : ` days: nothing metered in the last ${TEXT_DAYS} days`, ...periodLines(days, history, devices));
  out.push(' months:', ...periodLines(months, history, devices));
  const outcomes = history.days.flatMap((r) =>
    Object.entries(r.plan).map(
      ([id, o]) => `  ${r.label}  ${names[id] ?? id}: planned ${fixed(o.plannedKwh, 1)} kWh, metered ${fixed(o.meteredKwh, 1)} kWh over ${o.hours} h`,
    ),
  );
  out.push(
    outcomes.length > 0 ? ' planned against metered (hours with a stored plan and a whole metered hour):' : ' planned against metered: not known yet',
    ...outcomes,
  );
  if (history.unreadablePlans > 0) out.push(`  ${history.unreadablePlans} stored plan(s) could not be read and are left out`);
  return out;
}
