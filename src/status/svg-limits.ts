/**
 * The limits on the plan chart: a panel of the devices' planned power under the home's power limit,
 * its power-limitation (LPC) caps and reservations, and each device's own caps over its row.
 */
import type { LimitView, PlanView } from '../view/model.js';
import { dayLabel, escapeXml as esc, fixed, hhmm } from './format.js';

/** Where the chart puts time and rows. */
export interface ChartFrame {
  left: number;
  right: number;
  slotW: number;
  timezone: string;
  /** Device names by id. */
  names?: Readonly<Record<string, string>>;
}

export const powerPanelHeight = 90;

/** `Mon 02-03 17:00 → 19:00`, the end's day only when it differs. */
function span(startMs: number, endMs: number, tz: string): string {
  const day = dayLabel(endMs, tz) === dayLabel(startMs, tz) ? '' : `${dayLabel(endMs, tz)} `;
  return `${dayLabel(startMs, tz)} ${hhmm(startMs, tz)} → ${day}${hhmm(endMs, tz)}`;
}

/** The part of a cap within the plan's time, as x coordinates; null when it falls outside. */
function capX(l: Pick<LimitView, 'startMs' | 'endMs'>, plan: PlanView, f: ChartFrame): { x1: number; x2: number } | null {
  const first = plan.slots[0]?.startMs;
  if (first === undefined) return null;
  const slotMs = plan.slotMinutes * 60_000;
  const end = first + plan.slots.length * slotMs;
  const from = Math.max(l.startMs, first);
  const to = Math.min(l.endMs, end);
  if (to <= from) return null;
  const x = (ms: number): number => f.left + ((ms - first) / slotMs) * f.slotW;
  return { x1: x(from), x2: x(to) };
}

/** The power panel from `top`: planned kW per slot, the home's limit and its LPC caps as lines. */
export function powerPanel(plan: PlanView, limits: readonly LimitView[], limitKw: number, top: number, f: ChartFrame, width: number): string {
  const home = limits.flatMap((l) => (l.deviceId === null ? [{ l, at: capX(l, plan, f) }] : [])).filter((c) => c.at !== null);
  const totals = plan.slots.map((s) => Object.values(s.devices).reduce((sum, d) => sum + (d.on ? d.powerKw : 0), 0));
  const reserved = (plan.reservations ?? []).map((r) => ({ r, at: capX(r, plan, f) })).filter((c) => c.at !== null);
  const kwMax = Math.max(limitKw, ...totals, ...home.map((c) => c.l.capKw), ...reserved.map((c) => c.r.maxKw), 1) * 1.08;
  const y = (kw: number): number => top + powerPanelHeight - (kw / kwMax) * powerPanelHeight;
  const out: string[] = [`<g class="power"><text class="label" x="4" y="${top + 12}">Power</text><text x="4" y="${top + 26}">kW planned</text>`];
  out.push(`<line class="axis" x1="${f.left}" x2="${width - f.right}" y1="${fixed(y(0), 2)}" y2="${fixed(y(0), 2)}"/>`);
  plan.slots.forEach((s, i) => {
    const kw = totals[i]!;
    if (kw <= 0) return;
    out.push(
      `<rect class="power-bar" x="${fixed(f.left + i * f.slotW + 0.5, 2)}" y="${fixed(y(kw), 2)}" width="${fixed(Math.max(f.slotW - 1, 0.5), 2)}" height="${fixed(y(0) - y(kw), 2)}">` +
        `<title>${esc(`${hhmm(s.startMs, f.timezone)} planned ${fixed(kw, 1)} kW`)}</title></rect>`,
    );
  });
  const ly = fixed(y(limitKw), 2);
  out.push(
    `<line class="limit-line" data-kw="${limitKw}" x1="${f.left}" x2="${width - f.right}" y1="${ly}" y2="${ly}"><title>${esc(`the home's power limit, ${fixed(limitKw, 1)} kW`)}</title></line>`,
  );
  out.push(`<text x="${width - f.right + 4}" y="${fixed(y(limitKw) + 4, 2)}">${fixed(limitKw, 0)} kW</text>`);
  for (const { l, at } of home) {
    const cy = fixed(y(l.capKw), 2);
    out.push(
      `<line class="cap-line" data-kw="${l.capKw}" data-start="${new Date(l.startMs).toISOString()}" x1="${fixed(at!.x1, 2)}" x2="${fixed(at!.x2, 2)}" y1="${cy}" y2="${cy}">` +
        `<title>${esc(`LPC cap on the home, ${fixed(l.capKw, 1)} kW, ${span(l.startMs, l.endMs, f.timezone)}`)}</title></line>`,
    );
  }
  // A reservation is a cap that may come: drawn apart from the caps, and said whether the plan kept it.
  for (const { r, at } of reserved) {
    const ry = fixed(y(r.maxKw), 2);
    out.push(
      `<line class="reservation-line" data-kw="${r.maxKw}" data-kept="${r.kept}" data-start="${new Date(r.startMs).toISOString()}" x1="${fixed(at!.x1, 2)}" x2="${fixed(at!.x2, 2)}" y1="${ry}" y2="${ry}">` +
        `<title>${esc(`LPC reservation on the home, ${fixed(r.maxKw, 1)} kW, ${span(r.startMs, r.endMs, f.timezone)}: ${r.kept ? 'planned for' : 'not planned for'}`)}</title></line>`,
    );
  }
  out.push('</g>');
  return out.join('');
}

/** Each device's own caps over its row, from `rowTop` (one row per id in `ids`). */
export function deviceCaps(
  plan: PlanView,
  limits: readonly LimitView[],
  ids: readonly string[],
  rowTop: (r: number) => number,
  rowH: number,
  f: ChartFrame,
): string {
  const out: string[] = [];
  for (const l of limits) {
    const r = l.deviceId === null ? -1 : ids.indexOf(l.deviceId);
    const at = r < 0 ? null : capX(l, plan, f);
    if (!at) continue;
    const name = f.names?.[l.deviceId!] ?? l.deviceId!;
    out.push(
      `<rect class="device-cap" data-device="${esc(l.deviceId!)}" data-kw="${l.capKw}" x="${fixed(at.x1, 2)}" y="${rowTop(r) + 1}" width="${fixed(at.x2 - at.x1, 2)}" height="${rowH - 2}">` +
        `<title>${esc(`${name}: LPC cap ${fixed(l.capKw, 1)} kW, ${span(l.startMs, l.endMs, f.timezone)}`)}</title></rect>`,
    );
  }
  return out.join('');
}
