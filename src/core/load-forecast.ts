/**
 * A learned forecast of the house's own load (what the main meter sees beyond the controlled
 * devices), fitted from hourly history: a profile by kind of day and local hour, a linear term on
 * heating degrees below a balance temperature where the data show one, and prediction intervals
 * from the residuals' empirical quantiles. Recent weeks weigh more (exponential decay by age).
 * Pure: the rows, the time zone and `nowMs` come in.
 */
import { HOUR_MS, localParts } from './zoned-time.js';

/** One metered hour of the house's own load. */
export interface LoadHour {
  hourStartMs: number;
  kwh: number;
  /** Mean outdoor temperature of the hour, °C, when known. */
  outdoorC?: number | undefined;
  /** The store's quality of the hour: `gap` and `partial` hours are skipped, never read as zero. */
  quality?: 'measured' | 'estimated' | 'partial' | 'gap' | undefined;
}

export interface LoadFitOptions {
  timezone: string;
  nowMs: number;
  /** The smoothed base load, kW: the forecast when the history is too short. */
  smoothedKw: number;
  /** Public holidays (YYYY-MM-DD, or MM-DD every year), planned as Sundays. */
  holidays?: ReadonlyArray<string>;
  /** Age at which an hour weighs half as much as one just past, days. Default 28. */
  halfLifeDays?: number;
}

/**
 * Usable hours needed to learn a profile: two weeks, and at least two of each (kind of day, hour)
 * cell. With less, the smoothed number is the forecast (source `smoothed`).
 */
export const MIN_LEARN_HOURS = 14 * 24;
export const MIN_CELL_SAMPLES = 2;
/** From eight weeks of days on, each weekday has a profile of its own (six samples a cell at least). */
export const MIN_PER_WEEKDAY_HOURS = 8 * 7 * 24;
const MIN_PER_WEEKDAY_CELL_SAMPLES = 6;
/** The outdoor term is kept only when its slope is this many standard errors above zero. */
const MIN_SLOPE_T = 3;
/** Balance temperatures tried, °C: the one with the least squared error is kept. */
const BALANCE_CANDIDATES_C = [10, 12, 14, 15, 16, 17, 18];

/** A prediction interval's bounds as offsets from the mean, kW. */
export interface ResidualQuantiles {
  lower95: number;
  lower80: number;
  upper80: number;
  upper95: number;
}

export interface LoadModel {
  source: 'learned' | 'smoothed';
  /** Why this source, in a few words (shown by `wattshift status`). */
  note: string;
  timezone: string;
  holidays: ReadonlyArray<string>;
  /** `dayType`: weekday, Saturday, Sunday/holiday; `weekday`: one profile per day Sunday..Saturday. */
  days: 'dayType' | 'weekday';
  /** Mean kW by day key and local hour, with the outdoor term taken out when there is one. */
  profileKw: number[][];
  /** Each cell's mean heating degrees, K (the outdoor term's share of the cell when no temperature is given). */
  cellDegreesK: number[][];
  heating: { balanceC: number; kwPerK: number } | null;
  quantiles: ResidualQuantiles;
  smoothedKw: number;
  /** Usable hours the fit used. */
  hours: number;
}

export interface SlotLoadForecast {
  meanKw: number;
  lower80Kw: number;
  upper80Kw: number;
  lower95Kw: number;
  upper95Kw: number;
}

/** Weekday 0 (Sunday)..6 and local hour of an instant; a holiday counts as a Sunday. */
export function localDayAndHour(ms: number, timezone: string, holidays: ReadonlyArray<string>): { weekday: number; hour: number } {
  const p = localParts(ms, timezone);
  const mm = String(p.month).padStart(2, '0');
  const dd = String(p.day).padStart(2, '0');
  const holiday = holidays.includes(`${p.year}-${mm}-${dd}`) || holidays.includes(`${mm}-${dd}`);
  return { weekday: holiday ? 0 : new Date(Date.UTC(p.year, p.month - 1, p.day)).getUTCDay(), hour: p.hour };
}

const dayTypeOf = (weekday: number): number => (weekday === 0 ? 2 : weekday === 6 ? 1 : 0);

/** The value at share `q` of a weighted sample (the smallest value whose cumulative weight reaches it). */
export function weightedQuantile(values: ReadonlyArray<{ v: number; w: number }>, q: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a.v - b.v);
  const total = sorted.reduce((s, x) => s + x.w, 0);
  let acc = 0;
  for (const x of sorted) {
    acc += x.w;
    if (acc >= q * total) return x.v;
  }
  return sorted[sorted.length - 1]!.v;
}

const smoothedModel = (o: LoadFitOptions, hours: number, note: string): LoadModel => ({
  source: 'smoothed',
  note,
  timezone: o.timezone,
  holidays: o.holidays ?? [],
  days: 'dayType',
  profileKw: [],
  cellDegreesK: [],
  heating: null,
  quantiles: { lower95: 0, lower80: 0, upper80: 0, upper95: 0 },
  smoothedKw: o.smoothedKw,
  hours,
});

interface Sample {
  cell: number;
  hour: number;
  y: number;
  w: number;
  outdoorC: number | undefined;
}

/** Per-cell weighted means of `value` (NaN where a cell has no weight). */
function cellMeans(samples: readonly Sample[], cells: number, value: (s: Sample) => number): number[] {
  const sum = new Array<number>(cells * 24).fill(0);
  const weight = new Array<number>(cells * 24).fill(0);
  for (const s of samples) {
    sum[s.cell * 24 + s.hour]! += s.w * value(s);
    weight[s.cell * 24 + s.hour]! += s.w;
  }
  return sum.map((v, i) => (weight[i]! > 0 ? v / weight[i]! : NaN));
}

/**
 * The within-cell least-squares slope of the load on heating degrees below `balanceC` (the exact
 * fit of one level per cell plus one slope), its standard error and the residual sum of squares.
 */
function heatingSlope(samples: readonly Sample[], cells: number, balanceC: number): { slope: number; se: number; sse: number } {
  const deg = (s: Sample): number => Math.max(0, balanceC - (s.outdoorC ?? balanceC));
  const yBar = cellMeans(samples, cells, (s) => s.y);
  const dBar = cellMeans(samples, cells, deg);
  let sxy = 0;
  let sxx = 0;
  for (const s of samples) {
    const i = s.cell * 24 + s.hour;
    const dx = deg(s) - dBar[i]!;
    sxy += s.w * dx * (s.y - yBar[i]!);
    sxx += s.w * dx * dx;
  }
  const slope = sxx > 1e-9 ? sxy / sxx : 0;
  let sse = 0;
  let wSum = 0;
  for (const s of samples) {
    const i = s.cell * 24 + s.hour;
    const r = s.y - yBar[i]! - slope * (deg(s) - dBar[i]!);
    sse += s.w * r * r;
    wSum += s.w;
  }
  // Weights scaled to sum to the sample count, so the error variance reads per hour.
  const n = samples.length;
  const sigma2 = (sse * (n / wSum)) / Math.max(1, n - cells * 24 - 1);
  const se = sxx > 1e-9 ? Math.sqrt(sigma2 / (sxx * (n / wSum))) : Infinity;
  return { slope, se, sse };
}

/** Fits the model; with too little usable history, the smoothed number with source `smoothed`. */
export function fitLoadModel(rows: ReadonlyArray<LoadHour>, o: LoadFitOptions): LoadModel {
  const holidays = o.holidays ?? [];
  const halfLifeMs = (o.halfLifeDays ?? 28) * 86_400_000;
  const usable = rows.filter(
    (r) => r.quality !== 'gap' && r.quality !== 'partial' && Number.isFinite(r.kwh) && r.kwh >= 0 && r.hourStartMs + HOUR_MS <= o.nowMs,
  );
  if (usable.length < MIN_LEARN_HOURS)
    return smoothedModel(o, usable.length, `${usable.length} usable hours of history, ${MIN_LEARN_HOURS} needed: the smoothed base load`);
  const base = usable.map((r) => ({ ...localDayAndHour(r.hourStartMs, o.timezone, holidays), r }));
  const samplesFor = (perWeekday: boolean): Sample[] =>
    base.map(({ weekday, hour, r }) => ({
      cell: perWeekday ? weekday : dayTypeOf(weekday),
      hour,
      y: r.kwh,
      w: Math.pow(0.5, Math.max(0, o.nowMs - r.hourStartMs) / halfLifeMs),
      outdoorC: r.outdoorC !== undefined && Number.isFinite(r.outdoorC) ? r.outdoorC : undefined,
    }));
  const filled = (samples: readonly Sample[], cells: number, min: number): boolean => {
    const counts = new Array<number>(cells * 24).fill(0);
    for (const s of samples) counts[s.cell * 24 + s.hour]!++;
    return counts.every((c) => c >= min);
  };
  const weekdaySamples = usable.length >= MIN_PER_WEEKDAY_HOURS ? samplesFor(true) : null;
  const perWeekday = weekdaySamples !== null && filled(weekdaySamples, 7, MIN_PER_WEEKDAY_CELL_SAMPLES);
  const cells = perWeekday ? 7 : 3;
  const all = perWeekday ? weekdaySamples : samplesFor(false);
  if (!filled(all, cells, MIN_CELL_SAMPLES))
    return smoothedModel(o, usable.length, `some hour of some kind of day has fewer than ${MIN_CELL_SAMPLES} usable hours: the smoothed base load`);

  // The outdoor term, fitted on the hours with a temperature when most hours have one.
  const withTemp = all.filter((s) => s.outdoorC !== undefined);
  let heating: LoadModel['heating'] = null;
  let fitSamples: Sample[] = all;
  if (withTemp.length >= 0.5 * all.length && filled(withTemp, cells, MIN_CELL_SAMPLES)) {
    const best = BALANCE_CANDIDATES_C.map((balanceC) => ({ balanceC, ...heatingSlope(withTemp, cells, balanceC) })).reduce((a, b) =>
      b.sse < a.sse ? b : a,
    );
    if (best.slope > 0 && best.slope / best.se >= MIN_SLOPE_T) {
      heating = { balanceC: best.balanceC, kwPerK: best.slope };
      fitSamples = withTemp;
    }
  }
  const deg = (s: Sample): number => (heating ? Math.max(0, heating.balanceC - (s.outdoorC ?? heating.balanceC)) : 0);
  const yBar = cellMeans(fitSamples, cells, (s) => s.y);
  const dBar = cellMeans(fitSamples, cells, deg);
  const flat = yBar.map((y, i) => y - (heating ? heating.kwPerK * dBar[i]! : 0));
  const residuals = fitSamples.map((s) => {
    const i = s.cell * 24 + s.hour;
    return { v: s.y - flat[i]! - (heating ? heating.kwPerK * deg(s) : 0), w: s.w };
  });
  const byCell = (xs: number[]): number[][] => Array.from({ length: cells }, (_, c) => xs.slice(c * 24, c * 24 + 24));
  return {
    source: 'learned',
    note: `learned from ${usable.length} hours (${perWeekday ? 'per weekday' : 'weekday, Saturday, Sunday'}${heating ? `, ${heating.kwPerK.toFixed(2)} kW/K below ${heating.balanceC} °C` : ''})`,
    timezone: o.timezone,
    holidays,
    days: perWeekday ? 'weekday' : 'dayType',
    profileKw: byCell(flat),
    cellDegreesK: byCell(dBar.map((d) => (Number.isFinite(d) ? d : 0))),
    heating,
    quantiles: {
      lower95: weightedQuantile(residuals, 0.025),
      lower80: weightedQuantile(residuals, 0.1),
      upper80: weightedQuantile(residuals, 0.9),
      upper95: weightedQuantile(residuals, 0.975),
    },
    smoothedKw: o.smoothedKw,
    hours: usable.length,
  };
}

/**
 * The forecast for each slot start: the profile of its kind of day and local hour plus the outdoor
 * term (the cell's mean share where no temperature is given for the slot), and its intervals.
 */
export function forecastLoad(
  model: LoadModel,
  slotStartsMs: ReadonlyArray<number>,
  outdoorTempsC?: ReadonlyArray<number | undefined>,
): SlotLoadForecast[] {
  if (model.source === 'smoothed') {
    const kw = model.smoothedKw;
    return slotStartsMs.map(() => ({ meanKw: kw, lower80Kw: kw, upper80Kw: kw, lower95Kw: kw, upper95Kw: kw }));
  }
  const q = model.quantiles;
  let lastHour = NaN;
  let at = { weekday: 0, hour: 0 };
  return slotStartsMs.map((ms, i) => {
    const hourKey = Math.floor(ms / HOUR_MS);
    if (hourKey !== lastHour) {
      at = localDayAndHour(ms, model.timezone, model.holidays);
      lastHour = hourKey;
    }
    const cell = model.days === 'weekday' ? at.weekday : dayTypeOf(at.weekday);
    const t = outdoorTempsC?.[i];
    const h = model.heating;
    const degrees = h ? (t !== undefined && Number.isFinite(t) ? Math.max(0, h.balanceC - t) : model.cellDegreesK[cell]![at.hour]!) : 0;
    const mean = Math.max(0, model.profileKw[cell]![at.hour]! + (h ? h.kwPerK * degrees : 0));
    const bound = (offset: number): number => Math.max(0, mean + offset);
    return { meanKw: mean, lower80Kw: bound(q.lower80), upper80Kw: bound(q.upper80), lower95Kw: bound(q.lower95), upper95Kw: bound(q.upper95) };
  });
}
