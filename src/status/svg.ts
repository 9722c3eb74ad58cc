import type { LimitView, PlanView } from '../view/model.js';
import { dayLabel, escapeXml as esc, fixed, hhmm, planDeviceIds } from './format.js';
import { deviceCaps, powerPanel, powerPanelHeight } from './svg-limits.js';

export interface PlanSvgOptions {
  timezone: string;
  nowMs?: number;
  /** Device names by id, for the row labels. */
  names?: Record<string, string>;
  width?: number;
  /** The home's power limit, kW: with it the chart has a power panel under that limit. */
  limitKw?: number;
  /** LPC caps now and coming: the home's in the power panel, a device's over its row. */
  limits?: readonly LimitView[];
}

const left = 110;
const right = 56;
const top = 24;
const priceH = 170;
const rowH = 24;
const tempH = 110;
const gap = 18;

/**
 * The plan as an SVG chart: price bars with the incentive delta drawn over them, the planned power
 * under the home's limit and caps (svg-limits.ts), one row per device with a `rect.slot` per
 * planned on-slot and its own caps, and the forecast tank temperature as a line.
 * Plain markup with `<title>` tooltips: no script, no external assets.
 */
export function renderPlanSvg(plan: PlanView, options: PlanSvgOptions): string {
  const width = options.width ?? 960;
  const slots = plan.slots;
  const ids = planDeviceIds(slots);
  const tempIds = ids.filter((id) => slots.some((s) => s.devices[id]?.temperatureC !== undefined));
  const powerTop = top + priceH + gap;
  const rowsTop = options.limitKw === undefined ? powerTop : powerTop + powerPanelHeight + gap;
  const tempTop = rowsTop + ids.length * rowH + gap;
  const axisY = tempIds.length > 0 ? tempTop + tempH : rowsTop + ids.length * rowH;
  const height = axisY + 40;
  const n = Math.max(1, slots.length);
  const slotW = (width - left - right) / n;
  const x = (i: number): number => left + i * slotW;
  const slotMs = plan.slotMinutes * 60_000;
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" class="plan-chart" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="Plan: prices, incentive deltas, planned power under the limit and caps, planned slots and tank temperature">`,
  );
  out.push(
    '<style>.price-bar{fill:#8fb3e0}.delta-up{fill:#e07a6a}.delta-down{fill:none;stroke:#2e9e5b;stroke-width:1.5;stroke-dasharray:3 2}.slot{fill:#f2a33a}.row-bg{fill:#f4f4f4}.temp-line{fill:none;stroke:#c0392b;stroke-width:2}.axis{stroke:#999;stroke-width:1}.now-line{stroke:#333;stroke-width:1.5;stroke-dasharray:4 3}.power-bar{fill:#f2a33a;fill-opacity:.45}.limit-line{stroke:#555;stroke-width:1.5}.cap-line{stroke:#c0392b;stroke-width:2.5;stroke-dasharray:6 3}.reservation-line{stroke:#8e44ad;stroke-width:2;stroke-dasharray:2 3}.device-cap{fill:#c0392b;fill-opacity:.15;stroke:#c0392b;stroke-width:1;stroke-dasharray:3 2}text{font:11px sans-serif;fill:#333}.label{font-weight:bold}</style>',
  );
  if (slots.length === 0) {
    out.push(`<text x="${left}" y="${top + 20}">No plan yet</text></svg>`);
    return out.join('');
  }

  // Price panel: the scale includes what the price would be without a negative delta.
  const highs = slots.map((s) => Math.max(s.pricePerKwh, s.pricePerKwh - s.deltaPerKwh));
  const lows = slots.map((s) => Math.min(s.pricePerKwh, s.pricePerKwh - s.deltaPerKwh, 0));
  const pMax = Math.max(...highs, 0.0001);
  const pMin = Math.min(...lows);
  const py = (p: number): number => top + priceH - ((p - pMin) / (pMax - pMin)) * priceH;
  const zeroY = py(0);
  out.push(`<g class="prices"><text class="label" x="4" y="${top + 12}">Price</text><text x="4" y="${top + 26}">${esc(plan.currency)}/kWh</text>`);
  out.push(
    `<text x="${left - 6}" y="${py(pMax) + 4}" text-anchor="end">${fixed(pMax, 2)}</text><text x="${left - 6}" y="${zeroY + 4}" text-anchor="end">0</text>`,
  );
  slots.forEach((s, i) => {
    const yTop = Math.min(py(s.pricePerKwh), zeroY);
    const h = Math.abs(zeroY - py(s.pricePerKwh));
    const when = `${dayLabel(s.startMs, options.timezone)} ${hhmm(s.startMs, options.timezone)}`;
    out.push(
      `<rect class="price-bar" data-start="${new Date(s.startMs).toISOString()}" x="${fixed(x(i) + 0.5, 2)}" y="${fixed(yTop, 2)}" width="${fixed(Math.max(slotW - 1, 0.5), 2)}" height="${fixed(h, 2)}"><title>${esc(when)}: ${fixed(s.pricePerKwh, 3)} ${esc(plan.currency)}/kWh (delta ${fixed(s.deltaPerKwh, 3)})</title></rect>`,
    );
    if (s.deltaPerKwh > 0) {
      // the surcharge part of the price
      out.push(
        `<rect class="delta delta-up" x="${fixed(x(i) + 0.5, 2)}" y="${fixed(py(s.pricePerKwh), 2)}" width="${fixed(Math.max(slotW - 1, 0.5), 2)}" height="${fixed(py(s.pricePerKwh - s.deltaPerKwh) - py(s.pricePerKwh), 2)}"><title>surcharge ${fixed(s.deltaPerKwh, 3)}</title></rect>`,
      );
    } else if (s.deltaPerKwh < 0) {
      // what the price would have been without the reward
      out.push(
        `<rect class="delta delta-down" x="${fixed(x(i) + 1, 2)}" y="${fixed(py(s.pricePerKwh - s.deltaPerKwh), 2)}" width="${fixed(Math.max(slotW - 2, 0.5), 2)}" height="${fixed(py(s.pricePerKwh) - py(s.pricePerKwh - s.deltaPerKwh), 2)}"><title>reward ${fixed(-s.deltaPerKwh, 3)}</title></rect>`,
      );
    }
  });
  out.push(`<line class="axis" x1="${left}" x2="${width - right}" y1="${zeroY}" y2="${zeroY}"/></g>`);
  const frame = { left, right, slotW, timezone: options.timezone, ...(options.names ? { names: options.names } : {}) };
  if (options.limitKw !== undefined) out.push(powerPanel(plan, options.limits ?? [], options.limitKw, powerTop, frame, width));

  // Device rows.
  out.push('<g class="devices">');
  ids.forEach((id, r) => {
    const y = rowsTop + r * rowH;
    out.push(`<g class="device-row" data-device="${esc(id)}"><text x="4" y="${y + 16}">${esc(options.names?.[id] ?? id)}</text>`);
    out.push(`<rect class="row-bg" x="${left}" y="${y + 2}" width="${fixed(width - left - right, 2)}" height="${rowH - 4}"/>`);
    slots.forEach((s, i) => {
      const d = s.devices[id];
      if (!d?.on) return;
      const why = s.why ?? s.reason;
      const tip = `${hhmm(s.startMs, options.timezone)} ${fixed(d.powerKw, 1)} kW${why ? ` — ${why}` : ''}`;
      out.push(
        `<rect class="slot" data-device="${esc(id)}" data-start="${new Date(s.startMs).toISOString()}" x="${fixed(x(i) + 0.5, 2)}" y="${y + 4}" width="${fixed(Math.max(slotW - 1, 0.5), 2)}" height="${rowH - 8}"><title>${esc(tip)}</title></rect>`,
      );
    });
    out.push('</g>');
  });
  out.push(
    deviceCaps(plan, options.limits ?? [], ids, (r) => rowsTop + r * rowH, rowH, frame),
    '</g>',
  );

  // Tank temperature forecast.
  if (tempIds.length > 0) {
    const temps = slots.flatMap((s) => tempIds.map((id) => s.devices[id]?.temperatureC).filter((v): v is number => v !== undefined));
    const tMin = Math.floor(Math.min(...temps) - 1);
    const tMax = Math.ceil(Math.max(...temps) + 1);
    const ty = (c: number): number => tempTop + tempH - ((c - tMin) / (tMax - tMin)) * tempH;
    out.push(`<g class="temperature"><text class="label" x="4" y="${tempTop + 12}">Tank °C</text>`);
    out.push(`<text x="${width - right + 4}" y="${ty(tMax) + 4}">${tMax}°</text><text x="${width - right + 4}" y="${ty(tMin) + 4}">${tMin}°</text>`);
    out.push(`<line class="axis" x1="${left}" x2="${width - right}" y1="${tempTop + tempH}" y2="${tempTop + tempH}"/>`);
    for (const id of tempIds) {
      const pts = slots.flatMap((s, i) => {
        const c = s.devices[id]?.temperatureC;
        return c === undefined ? [] : [`${fixed(x(i) + slotW, 1)},${fixed(ty(c), 1)}`];
      });
      out.push(
        `<polyline class="temp-line" data-device="${esc(id)}" points="${pts.join(' ')}"><title>${esc(options.names?.[id] ?? id)} forecast temperature</title></polyline>`,
      );
    }
    out.push('</g>');
  }

  // Time axis: a tick every 3, 6, 12 or 24 hours, the first that leaves room for its label; a day
  // label at local midnight.
  const tickHours = [3, 6, 12].find((h) => ((h * 60) / plan.slotMinutes) * slotW >= 44) ?? 24;
  const tickEvery = Math.max(1, Math.round((tickHours * 60) / plan.slotMinutes));
  out.push('<g class="time-axis">');
  slots.forEach((s, i) => {
    const label = hhmm(s.startMs, options.timezone);
    if (label === '00:00') {
      out.push(
        `<line class="axis" x1="${fixed(x(i), 1)}" x2="${fixed(x(i), 1)}" y1="${top}" y2="${axisY}"/><text x="${fixed(x(i) + 2, 1)}" y="${axisY + 28}">${esc(dayLabel(s.startMs, options.timezone))}</text>`,
      );
    }
    if (i % tickEvery === 0 && label.endsWith(':00')) out.push(`<text x="${fixed(x(i), 1)}" y="${axisY + 14}" text-anchor="middle">${label}</text>`);
  });
  out.push('</g>');
  const now = options.nowMs;
  const first = slots[0]!.startMs;
  if (now !== undefined && now >= first && now < first + slots.length * slotMs) {
    const nx = left + ((now - first) / slotMs) * slotW;
    out.push(`<line class="now-line" x1="${fixed(nx, 1)}" x2="${fixed(nx, 1)}" y1="${top - 6}" y2="${axisY}"><title>now</title></line>`);
  }
  out.push('</svg>');
  return out.join('');
}
