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

/**
 * Spreads `totalKwh` over hours in proportion to `weights` (the tank's draws): a thermostat
 * replaces heat in the hour it is drawn.
 */
export function spreadByWeight(totalKwh: number, weights: readonly number[]): number[] {
  const sum = weights.reduce((a, b) => a + b, 0);
  return weights.map((w) => (sum > 0 ? (totalKwh * w) / sum : totalKwh / weights.length));
}

/** Fills hours from `startIndex` at `maxKwhPerHour` until `totalKwh` is placed. */
export function fillFromStart(totalKwh: number, hours: number, startIndex: number, maxKwhPerHour: number): number[] {
  const out = new Array<number>(hours).fill(0);
  let left = totalKwh;
  for (let i = startIndex; i < hours && left > 1e-9; i++) {
    out[i] = Math.min(maxKwhPerHour, left);
    left -= out[i]!;
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
