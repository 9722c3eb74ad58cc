import type { DeviceView, FuseView, HomeView } from '../view/model.js';
import { dateTime, escapeXml as esc, fixed } from './format.js';
import { renderPlanSvg } from './svg.js';
import { billSection } from './bill-section.js';
import { historyCss } from './history-page.js';
import { eventText } from './event-text.js';
import { planReportText } from './plan-report-text.js';
import { reservationText } from './reservation-text.js';

const kindLabel: Record<DeviceView['kind'], string> = {
  hotWaterTank: 'Hot water tank',
  evCharger: 'EV charger',
  meter: 'Meter',
  heatPump: 'Heat pump (SG Ready)',
  zone: 'Heated zone',
  solar: 'Solar (production)',
};
const sgLabel = { block: 'locked (1:0)', normal: 'normal (0:0)', boost: 'boost (0:1)', forced: 'start command (1:1)' } as const;

const css = `body{font:14px/1.4 system-ui,sans-serif;margin:1.5em auto;padding:0 1em;color:#222;max-width:1000px}
h1{font-size:1.4em;margin:0 0 .2em}h2{font-size:1.1em;margin:1.4em 0 .4em}
.badge{display:inline-block;padding:.1em .6em;border-radius:1em;font-weight:bold}
.ok{background:#d6f5df;color:#17692f}.failing{background:#fbd9d3;color:#8c1d0d}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse}td,th{padding:.25em .8em;border-bottom:1px solid #e4e4e4;text-align:left}
.limited{color:#8c1d0d;font-weight:bold}.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}.muted{color:#777}
.summary span{margin-right:1.5em;display:inline-block}
svg.plan-chart{width:100%;height:auto;display:block}.chart-narrow{display:none}
.legend{display:flex;flex-wrap:wrap;gap:.3em 1.2em;margin:.4em 0;font-size:.9em}.legend span{white-space:nowrap}
.sw{display:inline-block;width:1.1em;height:.8em;margin-right:.35em;vertical-align:-.05em}
.sw-price{background:#8fb3e0}.sw-up{background:#e07a6a}.sw-down{border:1.5px dashed #2e9e5b;box-sizing:border-box}
.sw-slot{background:#f2a33a}.sw-limit{height:0;border-top:1.5px solid #555;vertical-align:.25em}.sw-cap{height:0;border-top:2.5px dashed #c0392b;vertical-align:.25em}.sw-reserved{height:0;border-top:2px dotted #8e44ad;vertical-align:.25em}.sw-temp{height:0;border-top:2px solid #c0392b;vertical-align:.25em}.sw-now{height:0;border-top:1.5px dashed #333;vertical-align:.25em}
${historyCss}
@media (max-width:600px){body{margin:.8em auto;padding:0 .6em}td,th{padding:.2em .45em}.summary span{display:block;margin:0}
.chart-wide{display:none}.chart-narrow{display:block}
table.devices,table.devices tbody{display:block}table.devices thead{display:none}
table.devices tr{display:grid;grid-template-columns:1fr 1fr;gap:0 .8em;padding:.5em 0;border-bottom:1px solid #e4e4e4}
table.devices td{border:0;padding:.1em 0;text-align:left}table.devices td.wide{grid-column:1/-1}
table.devices td[data-label]::before{content:attr(data-label) ": ";color:#777}
table.devices td:empty,table.devices td.num:has(>.muted:only-child){display:none}}`;

function num(v: number | undefined, decimals: number, unit: string): string {
  return v === undefined || !Number.isFinite(v) ? '<span class="muted">–</span>' : `${fixed(v, decimals)} ${esc(unit)}`;
}

function planCell(d: DeviceView, tz: string): string {
  const cap =
    d.capKw === undefined
      ? ''
      : `<div class="limited">limited to ${fixed(d.capKw, 1)} kW (LPC)${d.capUntilMs === undefined ? '' : ` until ${esc(dateTime(d.capUntilMs, tz))}`}</div>`;
  return `${d.plannedOn ? 'on' : 'off'}${cap}${d.nextStartMs === undefined ? '' : `<div class="muted">next ${esc(dateTime(d.nextStartMs, tz))}</div>`}${comfortLine(d, tz)}`;
}

/** The tank's next comfort deadline: what, when, and whether the plan meets it. */
function comfortLine(d: DeviceView, tz: string): string {
  const c = d.nextComfort;
  if (!c) return '';
  const planned = `planned ${fixed(c.plannedTempC, 0)} °C`;
  return `<div class="${c.met ? 'muted' : 'limited'}">${esc(c.label)}: ${esc(dateTime(c.atMs, tz))}, ${c.met ? planned : `<b>${planned}</b>, below ${fixed(c.tempC, 0)} °C`}</div>`;
}

function limitsSection(view: HomeView, tz: string, names: Record<string, string>): string {
  if (view.limits.length === 0) return '<h2>Limits</h2><p class="muted" id="limits">No power-limitation (LPC) cap now or coming.</p>';
  const rows = view.limits.map(
    (l) =>
      `<tr><td>${l.deviceId === null ? 'whole home' : esc(names[l.deviceId] ?? l.deviceId)}</td><td class="num">${fixed(l.capKw, 1)} kW</td>` +
      `<td>${esc(dateTime(l.startMs, tz))}</td><td>${esc(dateTime(l.endMs, tz))}</td><td>${l.active ? '<b>active</b>' : 'coming'}</td></tr>`,
  );
  return `<h2>Limits</h2><div class="scroll"><table id="limits"><thead><tr><th>Applies to</th><th>Cap</th><th>From</th><th>Until</th><th></th></tr></thead><tbody>${rows.join('')}</tbody></table></div>`;
}

function eventsSection(view: HomeView, tz: string, names: Record<string, string>): string {
  if (view.events.length === 0) return '<h2>Events</h2><p class="muted" id="events">No event applies now or later.</p>';
  // The API's id is for the partner's support: in the title (a tooltip), not in the text.
  const rows = view.events.map((e) => `<li data-event="${esc(e.id)}" title="event ${esc(e.id)}">${esc(eventText(e, tz, names))}</li>`);
  return `<h2>Events</h2><ul id="events">${rows.join('')}</ul>`;
}

const legend =
  '<div class="legend" id="legend">' +
  '<span><i class="sw sw-price"></i>price per kWh</span>' +
  '<span><i class="sw sw-up"></i>incentive delta raising the price</span>' +
  '<span><i class="sw sw-down"></i>price before a reward (delta lowering it)</span>' +
  '<span><i class="sw sw-slot"></i>device planned on</span>' +
  '<span><i class="sw sw-limit"></i>the home\'s power limit</span>' +
  '<span><i class="sw sw-cap"></i>power-limitation (LPC) cap</span>' +
  '<span><i class="sw sw-reserved"></i>LPC reservation (a cap that may come)</span>' +
  '<span><i class="sw sw-temp"></i>tank temperature forecast</span>' +
  '<span><i class="sw sw-now"></i>now</span></div>';

function money(v: number, currency: string): string {
  return `${fixed(v, 2)} ${esc(currency)}`;
}

/** Per-line amps, `L1 12.0 A · L2 not measured`. */
function lines(values: readonly (number | null)[], what: (a: number) => string): string {
  return values.map((a, i) => `L${i + 1} ${a === null || !Number.isFinite(a) ? 'not measured' : what(a)}`).join(' · ');
}

function fuseText(f: FuseView): string {
  return (
    `Main fuse ${fixed(f.mainFuseA, 0)} A, headroom ${lines(f.headroomA, (a) => `${fixed(a, 1)} A`)}` +
    (f.limiting ? ` — <b id="fuse-limiting">limiting the charger</b> (${esc(f.reason ?? '')})` : '')
  );
}

/** A zone's preset, band now and frost floor, and a thermostat's setpoint. */
function zoneText(z: NonNullable<DeviceView['zone']>): string {
  const setpoint = z.setpointC === undefined ? '' : `, setpoint ${fixed(z.setpointC, 1)} °C`;
  return `preset ${esc(z.preset)}, band ${fixed(z.minC, 1)}–${fixed(z.maxC, 1)} °C (frost ${fixed(z.frostC, 0)} °C)${setpoint}`;
}

function deviceRow(d: DeviceView, tz: string): string {
  const ev = d.ev;
  const evText = ev
    ? `${ev.plugged ? 'plugged' : 'unplugged'}${ev.charging ? ', charging' : ''}${ev.socPct === undefined ? '' : `, ${fixed(ev.socPct, 0)} %`}${ev.vehicle ? `, ${esc(ev.vehicle.name)}` : ''}${ev.phases ? `, ${ev.phases}-phase` : ''}${ev.sessionKwh === undefined ? '' : `, ${fixed(ev.sessionKwh, 1)} kWh this session`}${ev.departure ? `, leaves ${esc(dateTime(Date.parse(ev.departure), tz))}` : ''}` +
      (d.currentLimitA === undefined ? '' : `; limit ${fixed(d.currentLimitA, 0)} A${d.fuseLimited ? ' (main fuse)' : ''}`)
    : d.phaseCurrentsA
      ? lines(d.phaseCurrentsA, (a) => `${fixed(a, 1)} A`)
      : d.sgReady
        ? `<span data-sg="${d.sgReady.state}">${sgLabel[d.sgReady.state]}</span>: ${esc(d.sgReady.reason)}`
        : d.zone
          ? zoneText(d.zone)
          : '';
  // data-label: on a phone each row is a card of labelled values (the header row is hidden).
  return (
    `<tr data-device="${esc(d.id)}"><td class="wide">${esc(d.name)}<div class="muted">${esc(kindLabel[d.kind])}</div></td>` +
    `<td data-label="State">${d.available ? 'online' : '<b>offline</b>'}</td><td data-label="Mode">${d.kind === 'meter' || d.kind === 'solar' ? '–' : esc(d.mode)}</td>` +
    `<td class="num" data-label="Temp.">${num(d.temperatureC, 1, '°C')}</td><td class="num" data-label="Power">${num(d.powerW, 0, 'W')}</td>` +
    `<td class="num" data-label="Energy">${num(d.energyKwh, 1, 'kWh')}</td>` +
    // A meter is read, never planned: it has no mode and no plan to show.
    `<td class="wide" data-label="Plan">${d.kind === 'meter' || d.kind === 'solar' ? '–' : planCell(d, tz)}</td>` +
    `<td class="wide">${evText}</td></tr>`
  );
}

/** The status page: server-rendered HTML with the plan as inline SVG; no scripts. */
export function renderStatusPage(
  view: HomeView,
  options: { timezone: string; /** The History section (history-page.ts). */ historyHtml?: string },
): string {
  const tz = options.timezone;
  const failing = view.health.jobs.filter((j) => !j.ok);
  const plan = view.plan;
  const names = Object.fromEntries(view.devices.map((d) => [d.id, d.name]));
  const price = view.price
    ? `${fixed(view.price.totalPerKwh, 3)} ${esc(view.price.currency)}/kWh (incentive delta ${fixed(view.price.deltaPerKwh, 3)} ${esc(view.price.currency)}/kWh, ${esc(view.price.source)})`
    : '<span class="muted">no price</span>';
  const parts: string[] = [];
  parts.push(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">` +
      `<meta http-equiv="refresh" content="60"><title>wattshift · ${esc(view.location.name)}</title><style>${css}</style></head><body>`,
  );
  parts.push(
    `<h1>${esc(view.location.name)}</h1><p><span class="badge ${view.health.ok ? 'ok' : 'failing'}" id="health">${view.health.ok ? 'healthy' : 'failing'}</span> ` +
      `<span class="muted">as of ${esc(dateTime(view.nowMs, tz))} (${esc(tz)})</span></p>`,
  );
  parts.push(
    `<p class="summary"><span>Price now: ${price}</span><span>Power: ${num(view.location.powerW, 0, 'W')}</span>` +
      `<span>Limit: ${fixed(view.location.limitKw, 1)} kW${view.location.lpcCapKw === undefined ? '' : `, LPC cap ${fixed(view.location.lpcCapKw, 1)} kW`}</span>` +
      `${view.location.fuse ? `<span id="fuse">${fuseText(view.location.fuse)}</span>` : ''}</p>`,
  );
  if (failing.length > 0) {
    parts.push('<h2>Problems</h2><ul id="problems">');
    for (const j of failing) {
      parts.push(
        `<li><b>${esc(j.name)}</b>${j.lastError ? `: ${esc(j.lastError.code)} — ${esc(j.lastError.message)} <span class="muted">(${esc(dateTime(j.lastError.atMs, tz))})</span>` : ''}</li>`,
      );
    }
    parts.push('</ul>');
  }
  parts.push(
    '<h2>Devices</h2><div class="scroll"><table class="devices"><thead><tr><th>Device</th><th>State</th><th>Mode</th><th>Temp.</th><th>Power</th><th>Energy</th><th>Plan</th><th>Car / phases</th></tr></thead><tbody>',
  );
  for (const d of view.devices) parts.push(deviceRow(d, tz));
  parts.push('</tbody></table></div>');
  parts.push('<h2>Plan</h2>');
  if (plan) {
    const c = plan.currency;
    parts.push(
      `<p class="summary" id="costs"><span>To pay for the planned energy: <b>${money(plan.expectedCost, c)}</b></span>` +
        `<span>of which incentive earned: ${money(plan.incentive, c)} (already taken off)</span>` +
        `<span>Saved against no shifting: ${money(plan.baselineCost - plan.expectedCost, c)} (would cost ${money(plan.baselineCost, c)})</span></p>`,
    );
    if (plan.shortfalls.length > 0) parts.push(`<ul id="shortfalls">${plan.shortfalls.map((s) => `<li>${esc(s)}</li>`).join('')}</ul>`);
    const now = plan.slots.find((s) => s.startMs <= view.nowMs && view.nowMs < s.startMs + plan.slotMinutes * 60_000);
    const whyNow = now?.why ?? now?.reason;
    if (whyNow) parts.push(`<p id="why-now">Now: ${esc(whyNow)}</p>`);
    if (plan.reservations && plan.reservations.length > 0)
      parts.push(
        `<ul id="reservations">${plan.reservations.map((r) => `<li data-event="${esc(r.eventId)}">${esc(reservationText(r, tz))}</li>`).join('')}</ul>`,
      );
    // Chart text scales with the chart: a phone gets its own narrow drawing, so labels stay legible.
    const chart = (width: number): string =>
      renderPlanSvg(plan, { timezone: tz, nowMs: view.nowMs, names, width, limitKw: view.location.limitKw, limits: view.limits });
    parts.push(`<div class="chart-wide">${chart(960)}</div><div class="chart-narrow">${chart(420)}</div>`, legend);
  } else {
    parts.push('<p class="muted">No plan yet.</p>');
  }
  parts.push(billSection(view.bill), limitsSection(view, tz, names), eventsSection(view, tz, names));
  parts.push(
    `<h2>Reports</h2><p id="reports">${view.outbox.pending} pending, ${view.outbox.accepted} accepted, ${view.outbox.rejected} rejected` +
      `${view.outbox.oldestDeadlineMs === undefined ? '' : `; oldest due ${esc(dateTime(view.outbox.oldestDeadlineMs, tz))}`}</p>`,
  );
  const planLine = planReportText(view.outbox, (ms) => dateTime(ms, tz));
  if (planLine !== null) parts.push(`<p id="plan-report">${esc(planLine)}</p>`);
  if (options.historyHtml !== undefined) parts.push(options.historyHtml);
  parts.push(
    '<p class="muted"><a href="/metrics">metrics</a> · <a href="/api/history">history JSON</a> · <a href="/api/view">view JSON</a> · <a href="/healthz">healthz</a></p></body></html>',
  );
  return parts.join('\n');
}
