/**
 * What a year (or any span) of the week-long home with the seasons comes to: the bill the daemon
 * kept month by month at the main meter, what the same hours would have cost without it (the
 * bill's baseline: the plan's naive schedule, each device at full power as soon as it may, with
 * the capacity step its peaks reach), the programme's incentive, the capacity steps avoided, the
 * minutes each tank spent below its comfort floor, the caps and their hours over the cap, and the
 * reports the API accepted.
 *
 * A month's bill is the daemon's as it last showed it in that month (it is read once an hour), so
 * the month's last hour is not in it. A cap is kept when every one of its hours took at most its
 * `maxKw` in energy from the grid (the mean of the 20 s samples of the home's true import); a cap
 * the daemon declined is not binding and is counted apart.
 */
import type { CapacityModel } from '../core/tariff.js';
import { capacityFee, stepIndex } from '../core/capacity.js';
import type { BillView } from '../view/model.js';
import { tankFloorC } from './homes/week.js';
import type { WeekRun } from './week-run.js';

const H = 3_600_000;
/** The samples' spacing, minutes. */
const sampleMinutes = 20 / 60;
/** Energy an hour may take beyond its cap before it counts as over, kWh (rounding of the samples). */
const capSlackKwh = 0.01;

export interface YearFigures {
  days: number;
  seed: number;
  months: {
    month: string;
    billNok: number;
    baselineNok: number;
    incentiveNok: number;
    capacityStepUpToKw: number | null;
    baselineStepIndex: number | null;
    stepIndex: number | null;
  }[];
  /** Sum of the months' bills, NOK with VAT and the capacity fees. */
  billNok: number;
  /** The baseline's bill less the bill, NOK. */
  savingsNok: number;
  /** The programme's incentive earned (the bills' negative deltas), NOK. */
  incentiveNok: number;
  /** Capacity steps the baseline's peaks would have reached above the bill's, summed over the months. */
  capacityStepsAvoided: number;
  /** Minutes each tank's water was below its comfort floor. */
  minutesBelowFloor: { tank: number; heatpump: number };
  caps: { posted: number; acknowledged: number; declined: number; unanswered: number };
  /** Hours of acknowledged caps whose energy from the grid exceeded the cap. */
  capViolations: number;
  deltas: number;
  reportsAccepted: number;
  departuresShort: number;
  departures: number;
  daemonErrors: number;
  stoppedCleanly: boolean;
  digest: string;
  kernel: WeekRun['kernel'];
}

const round = (x: number, digits = 2): number => Math.round(x * 10 ** digits) / 10 ** digits;

/** The step whose fee (with VAT as the bill shows it) is the baseline's capacity fee. */
function baselineStep(rule: CapacityModel, bill: BillView): number | null {
  const c = bill.capacity;
  const steps = rule.steps;
  if (!c || !steps?.length) return null;
  const month = Number(bill.month.slice(5, 7));
  const exVat = capacityFee(rule, c.measureKw, month);
  const withVat = exVat > 0 ? c.fee / exVat : 1;
  // A measure inside each step (the top one has no upper bound: just above the one below it).
  const fees = steps.map((st, i) => capacityFee(rule, st.upToKw ?? (steps[i - 1]?.upToKw ?? 0) + 0.001, month) * withVat);
  let best = 0;
  for (let i = 1; i < fees.length; i++)
    if (Math.abs(fees[i]! - bill.baseline.capacityFee) < Math.abs(fees[best]! - bill.baseline.capacityFee)) best = i;
  return best;
}

/** Each posted cap's answer in the accepted reports. */
function capAnswers(run: WeekRun): Map<string, 'acknowledged' | 'declined'> {
  const out = new Map<string, 'acknowledged' | 'declined'>();
  for (const r of run.reports) {
    for (const p of r.payloads) {
      const raw = p.raw as { acknowledgedTargets?: unknown[]; declinedTargets?: unknown[] } | undefined;
      if (raw?.acknowledgedTargets?.length) out.set(r.eventId, 'acknowledged');
      else if (raw?.declinedTargets?.length) out.set(r.eventId, 'declined');
    }
  }
  return out;
}

export function yearFigures(run: WeekRun, days: number, seed: number, rule: CapacityModel | undefined): YearFigures {
  const months = run.bills.map((b) => {
    const step = rule && b.capacity ? stepIndex(rule, b.capacity.measureKw) : null;
    return {
      month: b.month,
      billNok: round(b.total),
      baselineNok: round(b.baseline.total),
      incentiveNok: round(-b.incentive),
      capacityStepUpToKw: b.capacity?.stepUpToKw ?? null,
      stepIndex: step,
      baselineStepIndex: rule ? baselineStep(rule, b) : null,
    };
  });
  const answers = capAnswers(run);
  const caps = run.posted.filter((e) => e.kind === 'cap');
  let capViolations = 0;
  for (const cap of caps) {
    if (answers.get(cap.id) !== 'acknowledged') continue;
    for (let h = cap.fromMs; h < cap.toMs && h < run.endMs; h += H) {
      const inHour = run.samples.filter((s) => s.atMs >= h && s.atMs < h + H);
      if (inHour.length === 0) continue;
      const kwh = inHour.reduce((sum, s) => sum + s.importW, 0) / inHour.length / 1000;
      if (kwh > cap.maxKw + capSlackKwh) capViolations++;
    }
  }
  const due = run.departures.filter((d) => d.atMs < run.endMs);
  return {
    days,
    seed,
    months,
    billNok: round(months.reduce((s, m) => s + m.billNok, 0)),
    savingsNok: round(run.bills.reduce((s, b) => s + b.savings, 0)),
    incentiveNok: round(months.reduce((s, m) => s + m.incentiveNok, 0)),
    capacityStepsAvoided: months.reduce(
      (s, m) => s + (m.baselineStepIndex !== null && m.stepIndex !== null ? m.baselineStepIndex - m.stepIndex : 0),
      0,
    ),
    minutesBelowFloor: {
      tank: round(run.samples.filter((s) => s.tankC < tankFloorC).length * sampleMinutes, 1),
      heatpump: round(run.samples.filter((s) => s.pumpC < tankFloorC).length * sampleMinutes, 1),
    },
    caps: {
      posted: caps.length,
      acknowledged: caps.filter((c) => answers.get(c.id) === 'acknowledged').length,
      declined: caps.filter((c) => answers.get(c.id) === 'declined').length,
      unanswered: caps.filter((c) => !answers.has(c.id)).length,
    },
    capViolations,
    deltas: run.posted.filter((e) => e.kind === 'delta').length,
    reportsAccepted: run.reports.length,
    departures: due.length,
    departuresShort: due.filter((d) => d.socPct === undefined || d.socPct < d.targetSocPct - 1).length,
    daemonErrors: run.errors.length,
    stoppedCleanly: run.stopped,
    digest: run.digest,
    kernel: run.kernel,
  };
}

/** The figures as a two-column table for a terminal. */
export function yearFiguresTable(f: YearFigures, wallS: number): string {
  const rows: [string, string][] = [
    ['simulated days', `${f.days} (seed ${f.seed})`],
    ['bill', `${f.billNok.toFixed(2)} NOK (${f.months.length} months)`],
    ['savings against the baseline', `${f.savingsNok.toFixed(2)} NOK`],
    ['incentive earned', `${f.incentiveNok.toFixed(2)} NOK (${f.deltas} price deltas posted)`],
    ['capacity steps avoided', String(f.capacityStepsAvoided)],
    ['minutes below the comfort floor', `tank ${f.minutesBelowFloor.tank}, heat pump ${f.minutesBelowFloor.heatpump} (floor ${tankFloorC} °C)`],
    ['caps', `${f.caps.posted} posted: ${f.caps.acknowledged} acknowledged, ${f.caps.declined} declined, ${f.caps.unanswered} unanswered`],
    ['cap violations', `${f.capViolations} hours`],
    ['reports accepted', String(f.reportsAccepted)],
    ['departures below target', `${f.departuresShort} of ${f.departures}`],
    ['daemon error lines', String(f.daemonErrors)],
    ['stopped cleanly', f.stoppedCleanly ? 'yes' : 'no'],
    ['digest', f.digest],
    ['kernel', `${f.kernel.instants} instants, ${f.kernel.settles} settles`],
    ['wall time', `${wallS.toFixed(1)} s (${(wallS / f.days).toFixed(1)} s a simulated day)`],
  ];
  const monthRows: [string, string][] = f.months.map((m) => [
    `  ${m.month}`,
    `${m.billNok.toFixed(2)} NOK (baseline ${m.baselineNok.toFixed(2)}), incentive ${m.incentiveNok.toFixed(2)}, step up to ${m.capacityStepUpToKw ?? '–'} kW`,
  ]);
  rows.splice(2, 0, ...monthRows);
  const width = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join('\n');
}
