/**
 * The planner: `plan(input, nowMs, previous?)` — pure, synchronous, never throws on infeasible
 * inputs (it returns the best possible plan and lists what falls short).
 */
import { setupPlan, type Setup } from './plan-setup.js';
import { runOnByControl } from './run-on.js';
import { objective, type Solved } from './solve.js';
import { solveSetup } from './solve-setup.js';
import { comfortNeeding, comfortOutcomes, comfortShortfalls } from './comfort.js';
import type { BindingConstraint, Plan, PlanInput, PlanSlot, PriceSlot, Shortfall, TankOutcome, TankSlotPlan } from './types.js';
import {
  baselineMayReplace,
  chargedSoFar,
  deliveredBefore,
  evNeedFrom,
  fitsEvMinimum,
  leavesWithin,
  legionellaSlotOf,
  noneFrozen,
  powerOver,
  priceRanks,
  priceText,
  runOnReason,
  slotReason,
  tankReason,
} from './plan-steps.js';

const TOL = 1e-6;

/** Naive baseline: tank on its thermostat at full power, EV at full power from arrival. */
/** The tank on its thermostat at full power from slot `from`, starting with `e` (model energy). */
function thermostat(s: Setup, from: number, e: number, q: number[], tankE: number[]): void {
  const tk = s.tank;
  for (let t = from; t < s.n; t++) {
    if (!tk) {
      q[t] = 0;
      tankE[t] = 0;
      continue;
    }
    const m = tk.model;
    const base = m.a * e - (m.k[t] as number);
    const qt = Math.max(0, Math.min(m.slotKwh * (s.fraction[t] as number), m.eMax - base));
    q[t] = qt;
    e = base + qt;
    tankE[t] = e;
  }
}

export function baselinePlan(s: Setup): { q: number[]; tankE: number[]; ev: number[] } {
  const q: number[] = [];
  const tankE: number[] = [];
  const ev: number[] = [];
  thermostat(s, 0, s.tank ? s.tank.e0 : 0, q, tankE);
  let remaining = s.ev ? s.ev.needGrid : 0;
  for (let t = 0; t < s.n; t++) {
    const et = s.ev ? Math.max(0, Math.min(s.ev.rawCap[t] as number, remaining)) : 0;
    remaining -= et;
    ev.push(et);
  }
  return { q, tankE, ev };
}

/**
 * The naive tank for the bill's baseline, carried from plan to plan: in the slot the plan starts in,
 * what the previous plan's naive tank did there, then the thermostat from where that naive tank
 * stood. Started from the real tank only when no previous plan carries it, so a re-plan after
 * wattshift let the tank cool does not reheat the naive one at once.
 */
function twinTank(s: Setup, previous: Plan | undefined, fromNow: { q: number[]; tankE: number[] }): { q: number[]; tankE: number[] } {
  const first = s.slots[0];
  const carried = first && s.tank ? previous?.slots.find((p) => p.startMs === first.startMs)?.baselineTanks?.[s.tank.id] : undefined;
  // A plan read back from the store is the previous one after a restart: use only sound figures.
  if (!carried || !s.tank || !Number.isFinite(carried.energyKwh) || !Number.isFinite(carried.endTempC)) return fromNow;
  const q = [carried.energyKwh];
  const tankE = [s.tank.model.toE(carried.endTempC)];
  thermostat(s, 1, tankE[0] as number, q, tankE);
  return { q, tankE };
}

/**
 * The naive car's energy per slot for the bill's baseline: the session's energy (what it took so far
 * plus what it still needs) at full power from its plug-in time until departure, so that every plan
 * of the session puts the same naive energy in a past or present hour. Without a session: `fromNow`,
 * the baseline from the plan's own start.
 */
function sessionBaselineEv(s: Setup, input: PlanInput, fromNow: number[]): number[] {
  const e = input.ev;
  if (!e?.session || !s.ev) return fromNow;
  const { startMs, deliveredKwh } = e.session;
  const total = deliveredKwh + s.ev.needGrid;
  const naiveBy = (t: number): number => Math.min(total, (e.maxPowerKw * Math.max(0, Math.min(t, e.departureMs) - startMs)) / 3_600_000);
  return s.slots.map((slot) => naiveBy(slot.endMs) - naiveBy(slot.startMs));
}

function respectsLimits(s: Setup, q: number[], ev: number[]): boolean {
  for (let t = 0; t < s.n; t++) {
    const qt = q[t] as number;
    const et = ev[t] as number;
    if (qt + et > (s.headroomE[t] as number) + TOL) return false;
    if (s.tank && qt > (s.tank.cap[t] as number) + TOL) return false;
    if (s.ev && et > (s.ev.cap[t] as number) + TOL) return false;
  }
  return true;
}

function fallbackSolve(s: Setup, input: PlanInput): Solved {
  // No prices at all: the tank follows its thermostat (within the caps); the EV charges in the
  // default window, latest slots first, then whatever else it needs before departure.
  const tk = s.tank;
  const q: number[] = [];
  const tankE: number[] = [];
  let e = tk ? tk.e0 : 0;
  for (let t = 0; t < s.n; t++) {
    if (!tk) {
      q.push(0);
      tankE.push(0);
      continue;
    }
    const m = tk.model;
    const base = m.a * e - (m.k[t] as number);
    const cap = input.tank?.control === 'relay' ? (tk.relayLevel[t] as number) : (tk.cap[t] as number);
    const qt = Math.max(0, Math.min(cap, m.eMax - base));
    q.push(qt);
    e = base + qt;
    tankE.push(e);
  }
  const only = { ...s, tank: null };
  const evPart = s.ev
    ? solveSetup(
        { ...only, ev: { ...s.ev, cap: s.ev.cap.map((c, t) => Math.max(0, Math.min(c, (s.headroomE[t] as number) - (q[t] as number)))) } },
        input,
      )
    : null;
  const ev = evPart ? evPart.ev : q.map(() => 0);
  return { q, tankE, tankOn: q.map((v) => v > TOL), ev, evOn: ev.map((v) => v > TOL), legionellaSlot: -1 };
}

function bindingFor(s: Setup, sol: Solved, t: number): BindingConstraint[] {
  const b: BindingConstraint[] = [];
  const qt = sol.q[t] as number;
  const et = sol.ev[t] as number;
  const tk = s.tank;
  const ev = s.ev;
  const rawTank = tk ? tk.model.slotKwh * (s.fraction[t] as number) : 0;
  const rawEv = ev ? (ev.rawCap[t] as number) : 0;
  const h = s.headroomE[t] as number;
  if (qt + et >= h - TOL && h < rawTank + rawEv - TOL) b.push(s.reservedBinding[t] ? 'reservedLpc' : s.lpcBinding[t] ? 'lpc' : 'locationLimit');
  // A device's own LPC cap (below its power and below the shared headroom).
  const deviceCapped = (cap: number, raw: number, used: number): boolean => cap < raw - TOL && cap < h - TOL && used >= cap - TOL;
  if (!b.includes('lpc') && ((tk && deviceCapped(tk.cap[t] as number, rawTank, qt)) || (ev && deviceCapped(ev.cap[t] as number, rawEv, et))))
    b.push('lpc');
  if (tk) {
    const e = sol.tankE[t] as number;
    if (e >= tk.model.eMax - 1e-4) b.push('tankMax');
    if (e <= tk.model.eFloor + 1e-4) b.push('tankFloor');
    if (qt > TOL && qt >= rawTank - TOL) b.push('tankPower');
    if (sol.legionellaSlot === t) b.push('legionella');
    if (tk.comfort.some((c) => c.bySlot === t && e <= c.level + 1e-4)) b.push('comfort');
    if (tk.fixed[t] !== undefined) b.push('frozen');
  }
  if (ev) {
    if (et > TOL && et >= (ev.cap[t] as number) - TOL) b.push('evPower');
    if (t === ev.lastSlot && ev.needGrid > 0) b.push('evDeadline');
    if (ev.fixed[t] !== undefined && !b.includes('frozen')) b.push('frozen');
  }
  if ((s.slots[t] as { source: string }).source === 'fallback') b.push('fallback');
  return b;
}

function shortfallsFor(s: Setup, input: PlanInput, sol: Solved): Shortfall[] {
  const out: Shortfall[] = [...s.shortfalls];
  const tk = s.tank;
  if (tk) {
    let first = -1;
    let worst = 0;
    for (let t = 0; t < s.n; t++) {
      const d = tk.model.eFloor - (sol.tankE[t] as number);
      if (d > 1e-4) {
        if (first < 0) first = t;
        worst = Math.max(worst, d / tk.model.capacityKwhPerK);
      }
    }
    if (first >= 0) {
      out.push({
        device: 'tank',
        deviceId: tk.id,
        kind: 'belowFloor',
        atMs: s.slots[first]!.startMs,
        amount: worst,
        message: `tank expected up to ${worst.toFixed(1)} K below its ${input.tank!.minC} °C floor (not enough power or headroom)`,
      });
    }
    const leg = tk.legionella;
    if (leg) {
      let reached = false;
      for (let t = 0; t <= leg.bySlot; t++) if ((sol.tankE[t] as number) >= leg.level - 1e-4) reached = true;
      if (!reached) {
        out.push({
          device: 'tank',
          deviceId: tk.id,
          kind: 'legionella',
          atMs: leg.deadlineMs,
          amount: input.tank!.legionella!.tempC,
          message: `the tank cannot reach ${input.tank!.legionella!.tempC} °C by the legionella deadline`,
        });
      }
    }
  }
  if (tk)
    out.push(
      ...comfortShortfalls(comfortOutcomes(tk.comfort, s.slots, tk.model, sol.tankE), input.tank!.maxC).map((f) => ({ ...f, deviceId: tk.id })),
    );
  const ev = s.ev;
  if (ev && input.ev) {
    const got = sol.ev.reduce((x, y) => x + y, 0);
    const missing = (ev.needGrid - got) * input.ev.efficiency;
    if (missing > 1e-4) {
      out.push({
        device: 'ev',
        deviceId: ev.id,
        kind: 'evTarget',
        atMs: input.ev.departureMs,
        amount: missing,
        message: `the car gets ${missing.toFixed(2)} kWh less than needed by departure (power, caps or time)`,
      });
    }
  }
  return out;
}

/**
 * Plans the tank and the EV over the input's slots from `nowMs` on. Pure and synchronous.
 *
 * - Slots ending before `nowMs` are dropped; the current slot is scaled to its remaining time, and
 *   its energy is reported for the whole slot (what the devices took before `nowMs` included).
 * - With `previous`, the current slot and `options.frozenSlots` more keep their energies
 *   (clamped to the current caps, which are hard).
 * - With no known price at all the plan is a documented fallback: tank on its thermostat,
 *   EV in the default window (22–06 local unless configured).
 * - Never throws on infeasible inputs; see `Plan.shortfalls`. Throws `PLAN_INPUT_INVALID` only
 *   for malformed input (non-positive slot length, EV efficiency outside (0, 1]).
 */
export function plan(input: PlanInput, nowMs: number, previous?: Plan): Plan {
  const s = setupPlan(input, nowMs, previous);
  const sol = s.allFallback ? fallbackSolve(s, input) : solveSetup(s, input);
  const base = baselinePlan(s);
  const baseOk = respectsLimits(s, base.q, base.ev);
  const final = withLegionellaSlot(s, safetyNet(s, sol, base, baseOk));
  const runOn = runOnByControl(s, final);
  const billEv = sessionBaselineEv(s, input, base.ev);
  const billTank = twinTank(s, previous, base);
  const rank = priceRanks(s.price);
  const charged = chargedSoFar(final.ev, input.ev?.efficiency ?? 1);
  const slots: PlanSlot[] = s.slots.map((ps, t) => planSlot({ s, input, nowMs, final, runOn, billTank, billEv, rank, charged }, ps, t));
  let cost = 0;
  let baselineCost = 0;
  let incentive = 0;
  s.slots.forEach((ps, t) => {
    const flexible = (final.q[t] as number) + (runOn[t] as number) + (final.ev[t] as number);
    cost += ps.price * flexible;
    baselineCost += ps.price * ((base.q[t] as number) + (base.ev[t] as number));
    incentive -= ps.delta * flexible;
  });
  const first = s.slots[0];
  const last = s.slots[s.n - 1];
  const result: Plan = {
    createdMs: nowMs,
    currency: input.currency,
    slotMinutes: Math.round(s.slotMs / 60_000),
    startMs: first ? first.startMs : nowMs,
    endMs: last ? last.endMs : nowMs,
    mode: s.allFallback ? 'fallback' : 'optimal',
    slots,
    cost,
    baselineCost,
    baselineRespectsLimits: baseOk,
    incentiveEarned: incentive,
    shortfalls: shortfallsFor(s, input, final),
  };
  if (s.tank) result.tanks = { [s.tank.id]: tankOutcome(s, s.tank, final) };
  const e = input.ev;
  if (s.ev && e) {
    result.evs = { [s.ev.id]: { energyNeededKwh: s.ev.needGrid * (e.efficiency ?? 1), departureMs: e.departureMs, needFrom: evNeedFrom(e) } };
  }
  return result;
}

/**
 * Safety net for the approximate on/off DP: never plan worse than the naive baseline, where the
 * baseline may stand in for the plan.
 */
function safetyNet(s: Setup, sol: Solved, base: { q: number[]; tankE: number[]; ev: number[] }, baseOk: boolean): Solved {
  const may = baselineMayReplace({
    allFallback: s.allFallback,
    baseRespectsLimits: baseOk,
    baseFits: fitsEvMinimum(base.ev, s.ev?.minE),
    noneFrozen: noneFrozen(s.tank?.fixed, s.ev?.fixed),
  });
  if (may && objective(s, base.q, base.tankE, base.ev) < objective(s, sol.q, sol.tankE, sol.ev) - 1e-9) {
    return { q: base.q, tankE: base.tankE, tankOn: base.q.map((v) => v > TOL), ev: base.ev, evOn: base.ev.map((v) => v > TOL), legionellaSlot: -1 };
  }
  return sol;
}

/** The plan's legionella slot: the first where its tank energy reaches the level (whatever chose the energies). */
function withLegionellaSlot(s: Setup, sol: Solved): Solved {
  const leg = s.tank?.legionella;
  return leg ? { ...sol, legionellaSlot: legionellaSlotOf(sol.tankE, leg) } : sol;
}

interface SlotContext {
  s: Setup;
  input: PlanInput;
  nowMs: number;
  final: Solved;
  runOn: number[];
  billTank: { q: number[]; tankE: number[] };
  billEv: number[];
  rank: number[];
  charged: number[];
}

/** One slot of the plan: its prices and headroom, each device's energy and power, what binds it and why. */
function planSlot(c: SlotContext, ps: PriceSlot, t: number): PlanSlot {
  const { s, input, final } = c;
  const hours = s.slotHours * (s.fraction[t] as number);
  const qt = final.q[t] as number;
  const et = final.ev[t] as number;
  const extra = c.runOn[t] as number;
  const out: PlanSlot = {
    startMs: ps.startMs,
    endMs: ps.endMs,
    price: ps.price,
    spot: ps.spot,
    delta: ps.delta,
    source: ps.source,
    headroomKw: s.headroomKw[t] as number,
    binding: bindingFor(s, final, t),
    reason: '',
    baselineKwh: (c.billTank.q[t] as number) + (c.billEv[t] as number),
    ...(s.tank
      ? { baselineTanks: { [s.tank.id]: { energyKwh: c.billTank.q[t] as number, endTempC: s.tank.model.toC(c.billTank.tankE[t] as number) } } }
      : {}),
  };
  const parts: string[] = [];
  if (s.tank) {
    const tank: TankSlotPlan = {
      energyKwh: qt + deliveredBefore(t, ps.startMs, c.nowMs, input.tank),
      powerKw: powerOver(qt, hours),
      on: final.tankOn[t] === true || qt > TOL,
      endTempC: s.tank.model.toC(final.tankE[t] as number),
    };
    out.tanks = { [s.tank.id]: tank };
    if (qt > TOL) parts.push(tankReason(s.tank.id, qt, comfortNeeding(s.tank.comfort, s.tank.model, final.q, final.tankE, t)));
    if (Math.abs(extra) > TOL) {
      tank.runOnKwh = extra;
      parts.push(runOnReason(extra, input.tank!.maxC));
    }
  }
  if (s.ev) {
    // A car that leaves (or arrives) inside the slot charges at this power while it is there.
    const evHours = Math.min(hours, s.ev.availHours[t] as number);
    out.evs = {
      [s.ev.id]: {
        energyKwh: et + deliveredBefore(t, ps.startMs, c.nowMs, input.ev),
        powerKw: powerOver(et, evHours),
        on: final.evOn[t] === true || et > TOL,
        chargedKwh: c.charged[t] as number,
        ...leavesWithin(input.ev?.departureMs, ps),
      },
    };
    if (et > TOL) parts.push(`${s.ev.id} ${et.toFixed(2)} kWh`);
  }
  out.reason = slotReason(parts, priceText(ps, c.rank[t] as number, s.n, input.currency), out.binding);
  return out;
}

/** The tank's outcome: where it started, when the legionella cycle lands, and each comfort target's. */
function tankOutcome(s: Setup, tank: NonNullable<Setup['tank']>, final: Solved): TankOutcome {
  const outcome: TankOutcome = {
    startTempC: tank.startTempC,
    tempSource: tank.tempSource,
    legionellaAtMs: final.legionellaSlot >= 0 ? (s.slots[final.legionellaSlot]?.startMs ?? null) : null,
  };
  if (tank.comfort.length > 0) outcome.comfort = comfortOutcomes(tank.comfort, s.slots, tank.model, final.tankE);
  return outcome;
}
