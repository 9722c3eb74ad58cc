/**
 * The demo's figures, from what really happened (the simulators' metered energy per hour) and the
 * prices the daemon planned with. The baseline spends the same energy naively: the tank reheats
 * right after each draw, the car charges at full power from arrival.
 */

export interface HourRecord {
  hourStartMs: number;
  /** Total price the plan used for the hour, currency per kWh (null: no plan yet). */
  price: number | null;
  delta: number;
  tankKwh: number;
  carKwh: number;
  /** Baseline energy of the hour, kWh (tank + car). */
  baselineKwh: number;
  /** Power-limitation caps the daemon held during the hour, kW by device name (`home` for the location). */
  caps?: Record<string, number>;
}

export interface DemoSummary {
  reportsAccepted: number;
  reportsRejected: number;
  kwhShifted: number;
  costBaseline: number;
  costActual: number;
  incentiveEarned: number;
  floorViolations: number;
  capViolations: number;
}

const round = (x: number, digits = 2): number => Math.round(x * 10 ** digits) / 10 ** digits;
const hourMs = 3_600_000;

/**
 * Spreads `totalKwh` over hours in proportion to `weights` (the tank's draws): a thermostat
 * replaces heat in the hour it is drawn.
 */
export function spreadByWeight(totalKwh: number, weights: readonly number[]): number[] {
  const sum = weights.reduce((a, b) => a + b, 0);
  return weights.map((w) => (sum > 0 ? (totalKwh * w) / sum : totalKwh / weights.length));
}

/**
 * The naive car: each session's energy (what the car really took while plugged in) charged at full
 * power from the moment it arrived, hour by hour.
 */
export function naiveCharging(hours: readonly HourRecord[], sessions: readonly { fromMs: number; untilMs: number }[], fullKw: number): number[] {
  const within = (h: HourRecord, s: { fromMs: number; untilMs: number }): boolean => h.hourStartMs + hourMs > s.fromMs && h.hourStartMs < s.untilMs;
  // Energy outside every known session stays where it was taken.
  const out = hours.map((h) => (sessions.some((s) => within(h, s)) ? 0 : h.carKwh));
  for (const session of sessions) {
    const { fromMs, untilMs } = session;
    const inSession = (h: HourRecord): boolean => within(h, session);
    let left = hours.filter(inSession).reduce((s, h) => s + h.carKwh, 0);
    hours.forEach((h, i) => {
      if (!inSession(h) || left <= 1e-9) return;
      const pluggedH = (Math.min(h.hourStartMs + hourMs, untilMs) - Math.max(h.hourStartMs, fromMs)) / hourMs;
      const kwh = Math.min(left, fullKw * pluggedH);
      out[i] = out[i]! + kwh;
      left -= kwh;
    });
  }
  return out;
}

export function summarise(
  hours: readonly HourRecord[],
  counts: { reportsAccepted: number; reportsRejected: number; floorViolations: number; capViolations: number },
): DemoSummary {
  const priced = hours.filter((h) => h.price !== null);
  const cost = (kwh: (h: HourRecord) => number): number => priced.reduce((s, h) => s + kwh(h) * h.price!, 0);
  return {
    ...counts,
    kwhShifted: round(priced.reduce((s, h) => s + Math.max(0, h.tankKwh + h.carKwh - h.baselineKwh), 0)),
    costBaseline: round(cost((h) => h.baselineKwh)),
    costActual: round(cost((h) => h.tankKwh + h.carKwh)),
    incentiveEarned: round(priced.reduce((s, h) => s - (h.tankKwh + h.carKwh) * h.delta, 0)),
  };
}

/** The summary for people: what was paid (the incentive already in it), and what shifting saved. */
export function summaryLines(s: DemoSummary, hours: readonly HourRecord[], currency: string): string[] {
  const money = (v: number): string => `${v.toFixed(2)} ${currency}`;
  const capped = hours.filter((h) => h.caps && Object.keys(h.caps).length > 0);
  const who = [...new Set(capped.flatMap((h) => Object.keys(h.caps!)))].join(', ');
  return [
    `  energy shifted     ${s.kwhShifted.toFixed(2)} kWh`,
    `  to pay             ${money(s.costActual)} for the devices' energy, after ${money(s.incentiveEarned)} of incentive earned was taken off`,
    `  saved              ${money(s.costBaseline - s.costActual)} against no shifting (which would have cost ${money(s.costBaseline)})`,
    `  reports            ${s.reportsAccepted} accepted, ${s.reportsRejected} rejected by the sandbox`,
    `  limits             ${capped.length === 0 ? 'no power-limitation (LPC) hour' : `${capped.length} hour(s) under a power-limitation (LPC) cap (${who}), ${s.capViolations} cap violation(s)`}`,
    `  hot water          ${s.floorViolations} tank floor violation(s)`,
  ];
}

/** ` LPC tank ≤ 0.0 kW` for an hour the daemon held a cap in; empty otherwise. */
export function capMark(caps: Readonly<Record<string, number>> | undefined): string {
  const entries = Object.entries(caps ?? {});
  return entries.length === 0 ? '' : `  LPC ${entries.map(([who, kw]) => `${who} ≤ ${kw.toFixed(1)} kW`).join(', ')}`;
}
