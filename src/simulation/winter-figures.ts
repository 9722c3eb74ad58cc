/**
 * What a run of the winter home comes to: per zone, the minutes below its band and below its frost
 * floor, how far it fell below the band's lower edge, its energy and relay switches; the car at each
 * departure; the cap's peak; the bill and the capacity step. With a run of the same home on the
 * heaters' thermostats alone, the difference in bill and comfort.
 *
 * Counting: one sample a minute of the room's true air temperature. "Below the band beyond the
 * model error" is a sample below `minC − errorK`, where `errorK` is what the plan in force states
 * for the zone, outside the hours of an acknowledged cap (a cap may hold a room below its band,
 * never below its frost floor).
 */
import { bandAt } from './homes/winter.js';
import type { WinterRun, WinterSample } from './winter-run.js';

export interface ZoneFigures {
  /** Minutes below the band's lower edge. */
  minutesBelowBand: number;
  /** Minutes below `minC − errorK` outside an acknowledged cap. */
  minutesBelowBandBeyondError: number;
  minutesBelowFrost: number;
  /** The largest fall below the band's lower edge, K (0: never below). */
  maxBelowBandK: number;
  /** The model error the plans stated, K (largest seen; absent without plans for the zone). */
  errorK?: number;
  /** Mean room temperature, °C. */
  meanC: number;
  kwh: number;
  /** Relay switches (off→on and on→off) a day. */
  relaySwitchesPerDay: number;
}

export interface WinterFigures {
  zones: 'planned' | 'thermostats';
  days: number;
  seed: number;
  /** Bill of the month so far at the main meter, NOK with VAT; its capacity fee's share. */
  billNok: number | null;
  capacityFeeNok: number | null;
  /** The energy the bill priced, kWh, and its hours priced and left unpriced. */
  billEnergy: { kwh: number; hoursPriced: number; hoursUnpriced: number } | null;
  /** The bill's parts, NOK without VAT: energy, grid fee, tax, the household subsidy, the programme's incentive. */
  billParts: { energy: number; gridFee: number; tax: number; subsidy: number; incentive: number } | null;
  /** The capacity measure (mean of the three highest daily hourly peaks), kW, and its step's top. */
  capacityMeasureKw: number | null;
  capacityStepUpToKw: number | null;
  importKwh: number;
  perZone: Record<string, ZoneFigures>;
  /** The car's state of charge at each departure against its target, %. */
  departures: { at: string; socPct: number | null; targetSocPct: number }[];
  departuresShort: number;
  /** What the run leaves in store at its end: the tank's temperature, °C, and the car's state of charge, %. */
  end: { tankC: number; carSocPct: number };
  cap: { from: string; to: string; maxKw: number; answer: string; peakKw: number; maxHourKwh: number; outdoorC: number };
  outdoorMinC: number;
  outdoorMeanC: number;
  daemonErrors: number;
  stoppedCleanly: boolean;
  digest: string;
  decisions: Record<string, number>;
  kernel: WinterRun['kernel'];
}

const round = (x: number, digits: number): number => Math.round(x * 10 ** digits) / 10 ** digits;
const iso = (ms: number): string => new Date(ms).toISOString().slice(0, 16);
const inCap = (run: WinterRun, s: WinterSample): boolean => s.atMs >= run.cap.fromMs && s.atMs < run.cap.toMs;

export function winterFigures(run: WinterRun, days: number, seed: number): WinterFigures {
  const perZone: Record<string, ZoneFigures> = {};
  for (const zone of run.zoneDefs) {
    let below = 0;
    let beyond = 0;
    let frost = 0;
    let maxBelow = 0;
    let sum = 0;
    let switches = 0;
    let errorK: number | undefined;
    let last: boolean | undefined;
    for (const s of run.samples) {
      const r = s.rooms[zone.id]!;
      const { minC } = bandAt(zone, s.atMs);
      sum += r.tempC;
      if (r.errorK !== undefined) errorK = Math.max(errorK ?? 0, r.errorK);
      if (r.tempC < minC) below++;
      if (r.tempC < minC - (r.errorK ?? 0) && !(run.cap.answer === 'acknowledged' && inCap(run, s))) beyond++;
      if (r.tempC < zone.frostC) frost++;
      maxBelow = Math.max(maxBelow, minC - r.tempC);
      if (last !== undefined && last !== r.relayOn) switches++;
      last = r.relayOn;
    }
    perZone[zone.id] = {
      minutesBelowBand: below,
      minutesBelowBandBeyondError: beyond,
      minutesBelowFrost: frost,
      maxBelowBandK: round(maxBelow, 2),
      ...(errorK !== undefined ? { errorK } : {}),
      meanC: round(sum / Math.max(1, run.samples.length), 2),
      kwh: round(run.zoneKwh[zone.id] ?? 0, 2),
      relaySwitchesPerDay: round(switches / days, 1),
    };
  }
  const due = run.departures.filter((d) => d.atMs < run.endMs);
  const capSamples = run.samples.filter((s) => inCap(run, s));
  const hourKwh = new Map<number, number>();
  for (const s of capSamples) {
    const h = Math.floor(s.atMs / 3_600_000);
    hourKwh.set(h, (hourKwh.get(h) ?? 0) + s.importW / 1000 / 60);
  }
  const outdoor = run.samples.map((s) => s.outdoorC);
  const bill = run.bill;
  return {
    zones: run.zones,
    days,
    seed,
    billNok: bill ? round(bill.total, 2) : null,
    capacityFeeNok: bill?.capacity ? round(bill.capacity.fee, 2) : null,
    billEnergy: bill ? { kwh: round(bill.kwh, 1), hoursPriced: bill.hoursPriced, hoursUnpriced: bill.hoursUnpriced } : null,
    billParts: bill
      ? {
          energy: round(bill.energy, 2),
          gridFee: round(bill.gridFee, 2),
          tax: round(bill.tax, 2),
          subsidy: round(bill.subsidy, 2),
          incentive: round(bill.incentive, 2),
        }
      : null,
    capacityMeasureKw: bill?.capacity ? round(bill.capacity.measureKw, 2) : null,
    capacityStepUpToKw: bill?.capacity?.stepUpToKw ?? null,
    importKwh: round(
      run.samples.reduce((s, x) => s + x.importW / 1000 / 60, 0),
      1,
    ),
    perZone,
    departures: due.map((d) => ({ at: iso(d.atMs), socPct: d.socPct === undefined ? null : round(d.socPct, 1), targetSocPct: d.targetSocPct })),
    // The car's logger tells whole percent elsewhere; here the battery's own figure, with a point of slack as in the week.
    departuresShort: due.filter((d) => d.socPct === undefined || d.socPct < d.targetSocPct - 1).length,
    end: { tankC: round(run.end.tankC, 1), carSocPct: round(run.end.carSocPct, 1) },
    cap: {
      from: iso(run.cap.fromMs),
      to: iso(run.cap.toMs),
      maxKw: run.cap.maxKw,
      answer: run.cap.answer,
      peakKw: round(Math.max(0, ...capSamples.map((s) => s.importW)) / 1000, 2),
      maxHourKwh: round(Math.max(0, ...hourKwh.values()), 2),
      outdoorC: round(capSamples.reduce((s, x) => s + x.outdoorC, 0) / Math.max(1, capSamples.length), 1),
    },
    outdoorMinC: round(Math.min(...outdoor), 1),
    outdoorMeanC: round(outdoor.reduce((a, b) => a + b, 0) / Math.max(1, outdoor.length), 1),
    daemonErrors: run.errors.length,
    stoppedCleanly: run.stopped,
    digest: run.digest,
    decisions: run.decisions,
    kernel: run.kernel,
  };
}

/** The planned home against the thermostats alone: what the plan saved and the comfort either way. */
export function winterComparison(planned: WinterFigures, alone: WinterFigures) {
  const minutes = (f: WinterFigures, key: 'minutesBelowBand' | 'minutesBelowFrost') => Object.values(f.perZone).reduce((s, z) => s + z[key], 0);
  const kwh = (f: WinterFigures) =>
    round(
      Object.values(f.perZone).reduce((s, z) => s + z.kwh, 0),
      2,
    );
  return {
    billSavedNok: planned.billNok !== null && alone.billNok !== null ? round(alone.billNok - planned.billNok, 2) : null,
    capacityStepUpToKw: { planned: planned.capacityStepUpToKw, thermostats: alone.capacityStepUpToKw },
    zoneKwh: { planned: kwh(planned), thermostats: kwh(alone) },
    minutesBelowBand: { planned: minutes(planned, 'minutesBelowBand'), thermostats: minutes(alone, 'minutesBelowBand') },
    minutesBelowFrost: { planned: minutes(planned, 'minutesBelowFrost'), thermostats: minutes(alone, 'minutesBelowFrost') },
    capPeakKw: { planned: planned.cap.peakKw, thermostats: alone.cap.peakKw },
    // A bill is compared with what each run leaves in store: a car charged further at the end paid for it.
    end: { planned: planned.end, thermostats: alone.end },
  };
}
