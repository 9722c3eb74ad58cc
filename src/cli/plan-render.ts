import type { PlanView } from '../view/model.js';
import { assertTimezone, dayLabel, fixed, hhmm, planDeviceIds } from '../status/format.js';
import { reservationText } from '../status/reservation-text.js';

export interface RenderPlanOptions {
  /** Adds one line per slot with its price, each device's decision and the planner's reason. */
  explain: boolean;
  /** IANA timezone for the time axis and the explanation. */
  timezone: string;
  /** Terminal columns; 100 by default. */
  width?: number;
  /** Device names by id. */
  names?: Record<string, string>;
  /** Marks the current slot. */
  nowMs?: number;
}

const blocks = [' ', '▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
const labelW = 14;
/** Room kept right of the chart for the `12 slots` / `49–58 °C` notes. */
const noteW = 12;
const chartRows = 4;

function pad(s: string, n: number): string {
  return s.length >= n ? s.slice(0, n) : s + ' '.repeat(n - s.length);
}

/**
 * Groups slots into at most `cols` columns of `k` consecutive slots each, with `k` chosen so
 * that columns line up with whole hours where possible.
 */
function columns<T>(items: readonly T[], cols: number, slotMinutes: number): T[][] {
  const perHour = Math.max(1, Math.round(60 / slotMinutes));
  let k = Math.max(1, Math.ceil(items.length / Math.max(1, cols)));
  while (k < items.length && perHour % k !== 0 && k % perHour !== 0) k++;
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += k) out.push(items.slice(i, i + k));
  return out;
}

const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

/**
 * The plan for a terminal: a price chart in Unicode blocks, the incentive delta, a time axis,
 * one row per device (`█` on, `▌` on for part of a column, `·` off), the tank temperature
 * forecast, the cost summary and, with `explain`, the reason of each slot.
 */
export function renderPlan(view: PlanView, options: RenderPlanOptions): string {
  assertTimezone(options.timezone);
  const tz = options.timezone;
  const width = Math.max(40, options.width ?? 100);
  const slots = view.slots;
  const lines: string[] = [];
  if (slots.length === 0) return 'No plan: no slots to show.\n';
  const first = slots[0]!.startMs;
  const lastEnd = slots[slots.length - 1]!.startMs + view.slotMinutes * 60_000;
  const cols = columns(slots, width - labelW - noteW, view.slotMinutes);
  const perCol = cols[0]?.length ?? 1;
  lines.push(
    `Plan ${dayLabel(first, tz)} ${hhmm(first, tz)} → ${dayLabel(lastEnd, tz)} ${hhmm(lastEnd, tz)} (${tz}), ${view.slotMinutes}-min slots${perCol > 1 ? `, ${perCol} per column` : ''}`,
  );
  lines.push('');

  // Price chart: column height is the mean price; the floor sits a little under the cheapest
  // column so that it still shows, unless prices go negative.
  const prices = cols.map((c) => mean(c.map((s) => s.pricePerKwh)));
  const pMax = Math.max(...prices);
  const pMinRaw = Math.min(...prices);
  const floor = pMinRaw < 0 ? pMinRaw : pMinRaw - (pMax - pMinRaw) * 0.15;
  const span = pMax - floor || 1;
  const levels = prices.map((p) => Math.round(((p - floor) / span) * chartRows * 8));
  for (let r = chartRows - 1; r >= 0; r--) {
    const label = r === chartRows - 1 ? `${fixed(pMax, 3)}` : r === 0 ? `${fixed(pMinRaw, 3)}` : r === chartRows - 2 ? `${view.currency}/kWh` : '';
    const row = levels.map((lv) => blocks[Math.min(8, Math.max(0, lv - r * 8))]).join('');
    lines.push(`${pad(label, labelW - 1)} ${row}`);
  }
  const deltas = cols.map((c) => mean(c.map((s) => s.deltaPerKwh)));
  if (deltas.some((d) => d !== 0)) {
    lines.push(`${pad('delta ▼ ▲', labelW - 1)} ${deltas.map((d) => (d < 0 ? '▼' : d > 0 ? '▲' : '·')).join('')}`);
  }

  // Time axis: hour labels where they fit, a day label at local midnight.
  const axis = Array.from({ length: cols.length }, () => ' ');
  const days = Array.from({ length: cols.length }, () => ' ');
  let nextFree = 0;
  let nextDayFree = 0;
  cols.forEach((c, i) => {
    const startLabel = hhmm(c[0]!.startMs, tz);
    const midnight = c.some((s) => hhmm(s.startMs, tz) === '00:00');
    if (midnight && i >= nextDayFree && i + 9 <= days.length) {
      const d = dayLabel(c.find((s) => hhmm(s.startMs, tz) === '00:00')!.startMs, tz);
      for (let j = 0; j < d.length && i + j < days.length; j++) days[i + j] = d[j]!;
      nextDayFree = i + d.length + 1;
    }
    if (i >= nextFree && (startLabel.endsWith(':00') || perCol > 1) && i + 5 <= axis.length) {
      for (let j = 0; j < 5; j++) axis[i + j] = startLabel[j]!;
      nextFree = i + 7;
    }
  });
  lines.push(`${pad('', labelW - 1)} ${axis.join('')}`);
  if (days.some((c) => c !== ' ')) lines.push(`${pad('', labelW - 1)} ${days.join('')}`);
  if (options.nowMs !== undefined && options.nowMs >= first && options.nowMs < lastEnd) {
    const idx = cols.findIndex((c) => options.nowMs! < c[c.length - 1]!.startMs + view.slotMinutes * 60_000);
    lines.push(`${pad('now', labelW - 1)} ${' '.repeat(Math.max(0, idx))}^`);
  }
  lines.push('');

  // Device rows and temperature forecasts.
  const ids = planDeviceIds(slots);
  for (const id of ids) {
    const row = cols
      .map((c) => {
        const on = c.filter((s) => s.devices[id]?.on).length;
        return on === 0 ? '·' : on === c.length ? '█' : '▌';
      })
      .join('');
    const onSlots = slots.filter((s) => s.devices[id]?.on).length;
    const name = options.names?.[id] ?? id;
    // A name longer than the label column gets a line of its own rather than being cut.
    if (name.length > labelW - 1) lines.push(name);
    lines.push(`${pad(name.length > labelW - 1 ? '' : name, labelW - 1)} ${row}  ${onSlots} slot${onSlots === 1 ? '' : 's'}`);
    const temps = cols.map((c) => c.map((s) => s.devices[id]?.temperatureC).filter((v): v is number => v !== undefined));
    if (temps.some((t) => t.length > 0)) {
      const all = temps.flat();
      const tMin = Math.min(...all);
      const tMax = Math.max(...all);
      const line = temps.map((t) => (t.length === 0 ? ' ' : blocks[1 + Math.round(((mean(t) - tMin) / (tMax - tMin || 1)) * 7)])).join('');
      lines.push(`${pad('  °C forecast', labelW - 1)} ${line}  ${fixed(tMin, 0)}–${fixed(tMax, 0)} °C`);
    }
  }
  lines.push('');
  const savings = view.baselineCost - view.expectedCost;
  const money = (v: number): string => `${fixed(v, 2)} ${view.currency}`;
  lines.push(
    `Expected cost ${money(view.expectedCost)}, incentive ${money(view.incentive)} already taken off`,
    `Without shifting ${money(view.baselineCost)}: saving ${money(savings)}`,
  );
  const c = view.nextComfort;
  if (c)
    lines.push(
      `Next comfort deadline: ${c.label}, ${dayLabel(c.atMs, tz)} ${hhmm(c.atMs, tz)}, ≥ ${fixed(c.tempC, 0)} °C (planned ${fixed(c.plannedTempC, 1)} °C${c.met ? '' : ', NOT MET'})`,
    );
  for (const s of view.shortfalls) lines.push(`Shortfall: ${s}`);

  if (options.explain) {
    if (view.evNeed) lines.push(`Car's need: ${view.evNeed}`);
    lines.push(`Base load: ${view.baseLoad ?? 'the smoothed base load, one number for every slot (too little metered history to learn from)'}`);
    for (const z of view.zones ?? []) lines.push(`Zone ${z}`);
    for (const r of view.reservations ?? []) lines.push(reservationText(r, tz));
    lines.push('', 'Why each slot:');
    for (const s of slots) {
      const decisions = ids.map((id) => {
        const d = s.devices[id];
        if (!d) return `${options.names?.[id] ?? id} –`;
        const temp = d.temperatureC === undefined ? '' : ` ${fixed(d.temperatureC, 0)}°C`;
        return `${options.names?.[id] ?? id} ${d.on ? `ON ${fixed(d.powerKw, 1)} kW` : 'off'}${temp}`;
      });
      const delta = s.deltaPerKwh === 0 ? '' : ` Δ${s.deltaPerKwh > 0 ? '+' : ''}${fixed(s.deltaPerKwh, 3)}`;
      const why = s.why ?? s.reason;
      lines.push(
        `  ${dayLabel(s.startMs, tz)} ${hhmm(s.startMs, tz)}  ${fixed(s.pricePerKwh, 3)}${delta}  ${decisions.join(', ')}${why ? ` — ${why}` : ''}`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}
