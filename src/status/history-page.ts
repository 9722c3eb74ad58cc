/**
 * The status page's History section: energy by local day and month per device and for the whole
 * home, each figure with its coverage, and planned against metered energy where it is known.
 */
import { periodsWithData, type EnergyHistory, type HistoryRow } from './history.js';
import { escapeXml as esc, fixed } from './format.js';

// On a phone the tables are wider than the screen: they scroll sideways with the period kept in view.
export const historyCss = `.q-partial{color:#9a5b00}.q-gap{color:#999}
.history td.num small{display:block;color:#777;font-size:.8em}.history td:first-child{white-space:nowrap}
.history th:first-child,.history td:first-child{position:sticky;left:0;background:#fff}
.scroll-hint{display:none}@media (max-width:600px){.scroll-hint{display:block}}`;

/** One energy cell: kWh and, when not complete, how much of the period it covers. */
function energyCell(e: HistoryRow['energy'][string] | undefined): string {
  if (!e || e.hours === 0) return '<td class="num muted">–</td>';
  if (e.quality === 'gap') return '<td class="num q-gap" data-quality="gap">no data</td>';
  const note = e.quality === 'complete' ? '' : `<small>partial: ${e.completeHours} of ${e.hours} h whole</small>`;
  return `<td class="num q-${e.quality}" data-quality="${e.quality}">${fixed(e.kwh, 1)} kWh${note}</td>`;
}

/** Cost, incentive and savings cells of the whole home; partial when some hours are unpriced. */
function moneyCells(m: HistoryRow['money'], currency: string): string {
  if (!m || m.hours === 0) return '<td class="num muted">–</td>'.repeat(3);
  if (m.quality === 'gap') return '<td class="num q-gap" data-quality="gap" colspan="3">not priced</td>';
  const note = m.quality === 'complete' ? '' : `<small>partial: ${m.pricedHours} of ${m.hours} h priced</small>`;
  const cell = (v: number): string => `<td class="num q-${m.quality}" data-quality="${m.quality}">${fixed(v, 2)} ${esc(currency)}${note}</td>`;
  return cell(m.cost) + cell(m.incentive) + cell(m.savings);
}

function table(id: string, caption: string, rows: readonly HistoryRow[], history: EnergyHistory): string {
  if (rows.length === 0) return `<h3>${esc(caption)}</h3><p class="muted" id="${id}">Nothing metered in these ${esc(caption.toLowerCase())}.</p>`;
  const { devices, currency } = history;
  const withMoney = rows.some((r) => r.money);
  const head =
    devices.map((d) => `<th class="num">${esc(d.wholeHome ? `${d.name} (whole home)` : d.name)}</th>`).join('') +
    (withMoney ? '<th class="num">Cost</th><th class="num">Incentive earned</th><th class="num">Saved</th>' : '');
  const body = rows
    .map(
      (r) =>
        `<tr data-period="${esc(r.label)}"><td>${esc(r.label)}</td>${devices.map((d) => energyCell(r.energy[d.id])).join('')}` +
        `${withMoney ? moneyCells(r.money, currency) : ''}</tr>`,
    )
    .join('');
  return `<h3>${esc(caption)}</h3><div class="scroll"><table class="history" id="${id}"><thead><tr><th></th>${head}</tr></thead><tbody>${body}</tbody></table></div>`;
}

function planTable(history: EnergyHistory): string {
  const names = Object.fromEntries(history.devices.map((d) => [d.id, d.name]));
  const rows = history.days.flatMap((r) =>
    Object.entries(r.plan).map(
      ([id, o]) =>
        `<tr><td>${esc(r.label)}</td><td>${esc(names[id] ?? id)}</td><td class="num">${fixed(o.plannedKwh, 1)} kWh</td>` +
        `<td class="num">${fixed(o.meteredKwh, 1)} kWh</td><td class="num">${o.hours} h</td></tr>`,
    ),
  );
  if (rows.length === 0)
    return '<p class="muted" id="plan-outcome">Planned against metered: not known yet (no stored plan covers a fully metered hour).</p>';
  return (
    '<h3>Planned against metered</h3><div class="scroll"><table id="plan-outcome"><thead><tr><th>Day</th><th>Device</th><th class="num">Planned</th><th class="num">Metered</th><th class="num">Hours compared</th></tr></thead>' +
    `<tbody>${rows.join('')}</tbody></table></div><p class="muted">Only hours with a stored plan made before they began and a whole metered hour are compared.</p>`
  );
}

/** The History section; `error` when the history could not be read. */
export function renderHistorySection(history: EnergyHistory | null, error?: string): string {
  if (!history) return `<h2>History</h2><p class="muted" id="history">History not available${error ? `: ${esc(error)}` : ''}.</p>`;
  if (history.devices.length === 0) return '<h2>History</h2><p class="muted" id="history">No devices configured.</p>';
  const unreadable =
    history.unreadablePlans > 0 ? `<p class="muted">${history.unreadablePlans} stored plan(s) could not be read and are left out.</p>` : '';
  const days = periodsWithData(history.days);
  const months = periodsWithData(history.months);
  if (days.length === 0 && months.length === 0) {
    return `<h2 id="history">History</h2><p class="muted" id="history-empty">Nothing metered yet: the history fills in hour by hour once the devices' energy is read.</p>${unreadable}`;
  }
  return (
    `<h2 id="history">History</h2><p class="muted">Metered energy per local day and month. “partial”: some hours are missing or only partly metered, so the figure is a lower bound.` +
    ` Cost, incentive and savings are the whole home's priced hours, VAT included, without the capacity fee; savings are against no shifting.</p>` +
    '<p class="muted scroll-hint" id="history-hint">Swipe a table sideways for every device, cost, incentive and savings.</p>' +
    table('history-days', 'Days', days, history) +
    table('history-months', 'Months', months, history) +
    planTable(history) +
    unreadable
  );
}
