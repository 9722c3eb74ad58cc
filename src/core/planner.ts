/**
 * The planner: `plan(input, nowMs, previous?)` — pure, synchronous, never throws on infeasible
 * inputs (it returns the best possible plan and lists what falls short).
 */
import { setupPlan, type Setup } from './plan-setup.js';
import { runOnByControl } from './run-on.js';
import { objective, type Solved } from './solve.js';
import { solveSetup } from './solve-setup.js';
import { comfortNeeding, comfortOutcomes, comfortShortfalls } from './comfort.js';
import type { BindingConstraint, Plan, PlanInput, PlanSlot, Shortfall, TankOutcome, TankSlotPlan } from './types.js';

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
    const qt = Math.max(0, Math.min(m.slotKWh * (s.fraction[t] as number), m.eMax - base));
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
  if (!carried || !s.tank || !Number.isFinite(carried.energyKWh) || !Number.isFinite(carried.endTempC)) return fromNow;
  const q = [carried.energyKWh];
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
  const { startMs, deliveredKWh } = e.session;
  const total = deliveredKWh + s.ev.needGrid;
  const naiveBy = (t: number): number => Math.min(total, (e.maxPowerKW * Math.max(0, Math.min(t, e.departureMs) - startMs)) / 3_600_000);
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
    ? solveSetup({ ...only, ev: { ...s.ev, cap: s.ev.cap.map((c, t) => Math.max(0, Math.min(c, (s.headroomE[t] as number) - (q[t] as number)))) } }, input)
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
  const rawTank = tk ? tk.model.slotKWh * (s.fraction[t] as number) : 0;
  const rawEv = ev ? (ev.rawCap[t] as number) : 0;
  const h = s.headroomE[t] as number;
  if (qt + et >= h - TOL && h < rawTank + rawEv - TOL) b.push(s.reservedBinding[t] ? 'reservedLpc' : s.lpcBinding[t] ? 'lpc' : 'locationLimit');
  // A device's own LPC cap (below its power and below the shared headroom).
  const deviceCapped = (cap: number, raw: number, used: number): boolean => cap < raw - TOL && cap < h - TOL && used >= cap - TOL;
  if (!b.includes('lpc') && ((tk && deviceCapped(tk.cap[t] as number, rawTank, qt)) || (ev && deviceCapped(ev.cap[t] as number, rawEv, et)))) b.push('lpc');
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
        worst = Math.max(worst, d / tk.model.capacityKWhPerK);
      }
    }
    if (first >= 0) {
      out.push({ device: 'tank', deviceId: tk.id, kind: 'belowFloor', atMs: s.slots[first]!.startMs, amount: worst,
        message: `tank expected up to ${worst.toFixed(1)} K below its ${input.tank!.minC} °C floor (not enough power or headroom)` });
    }
    const leg = tk.legionella;
    if (leg) {
      let reached = false;
      for (let t = 0; t <= leg.bySlot; t++) if ((sol.tankE[t] as number) >= leg.level - 1e-4) reached = true;
      if (!reached) {
        out.push({ device: 'tank', deviceId: tk.id, kind: 'legionella', atMs: leg.deadlineMs, amount: input.tank!.legionella!.tempC,
          message: `the tank cannot reach ${input.tank!.legionella!.tempC} °C by the legionella deadline` });
      }
    }
  }
  if (tk) out.push(...comfortShortfalls(comfortOutcomes(tk.comfort, s.slots, tk.model, sol.tankE), input.tank!.maxC).map((f) => ({ ...f, deviceId: tk.id })));
  const ev = s.ev;
  if (ev && input.ev) {
    const got = sol.ev.reduce((x, y) => x + y, 0);
    const missing = (ev.needGrid - got) * input.ev.efficiency;
    if (missing > 1e-4) {
      out.push({ device: 'ev', deviceId: ev.id, kind: 'evTarget', atMs: input.ev.departureMs, amount: missing,
        message: `the car gets ${missing.toFixed(2)} kWh less than needed by departure (power, caps or time)` });
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
  let final = sol;
  const noneFrozen = !(s.tank?.fixed.some((v) => v !== undefined) || s.ev?.fixed.some((v) => v !== undefined));
  // The baseline can replace the plan only where it fits the plan's model too (EV minimum power).
  const baseFits = !s.ev || base.ev.every((v, t) => v <= TOL || v + TOL >= (s.ev!.minE[t] as number));
  if (!s.allFallback && baseOk && baseFits && noneFrozen) {
    // Safety net for the approximate on/off DP: never plan worse than the naive baseline.
    if (objective(s, base.q, base.tankE, base.ev) < objective(s, sol.q, sol.tankE, sol.ev) - 1e-9) {
      final = { q: base.q, tankE: base.tankE, tankOn: base.q.map((v) => v > TOL), ev: base.ev, evOn: base.ev.map((v) => v > TOL), legionellaSlot: -1 };
    }
  }
  if (s.tank?.legionella) {
    const leg = s.tank.legionella;
    final = { ...final, legionellaSlot: final.tankE.findIndex((e, t) => t <= leg.bySlot && e >= leg.level - 1e-6) };
  }
  const runOn = runOnByControl(s, final);
  const billEv = sessionBaselineEv(s, input, base.ev);
  const billTank = twinTank(s, previous, base);
  const eff = input.ev?.efficiency ?? 1;
  let charged = 0;
  let cost = 0;
  let baselineCost = 0;
  let incentive = 0;
  const order = s.slots.map((_, t) => t).sort((x, y) => (s.price[x] as number) - (s.price[y] as number));
  const rank = new Array<number>(s.n);
  order.forEach((t, i) => (rank[t] = i + 1));
  const slots: PlanSlot[] = s.slots.map((ps, t) => {
    const hours = s.slotHours * (s.fraction[t] as number);
    const qt = final.q[t] as number;
    const et = final.ev[t] as number;
    const extra = runOn[t] as number;
    cost += ps.price * (qt + extra + et);
    baselineCost += ps.price * ((base.q[t] as number) + (base.ev[t] as number));
    incentive -= ps.delta * (qt + extra + et);
    const out: PlanSlot = {
      startMs: ps.startMs, endMs: ps.endMs, price: ps.price, spot: ps.spot, delta: ps.delta, source: ps.source,
      headroomKW: s.headroomKW[t] as number, binding: bindingFor(s, final, t), reason: '',
      baselineKWh: (billTank.q[t] as number) + (billEv[t] as number),
      ...(s.tank ? { baselineTanks: { [s.tank.id]: { energyKWh: billTank.q[t] as number, endTempC: s.tank.model.toC(billTank.tankE[t] as number) } } } : {}),
    };
    const parts: string[] = [];
    // The slot the plan is made in counts what it already took, so its target is for the whole slot.
    const before = (d: { slotDeliveredKWh?: number } | null | undefined): number => (t === 0 && ps.startMs < nowMs ? Math.max(0, d?.slotDeliveredKWh ?? 0) : 0);
    if (s.tank) {
      const tank: TankSlotPlan = { energyKWh: qt + before(input.tank), powerKW: hours > 0 ? qt / hours : 0, on: final.tankOn[t] === true || qt > TOL, endTempC: s.tank.model.toC(final.tankE[t] as number) };
      out.tanks = { [s.tank.id]: tank };
      const forComfort = comfortNeeding(s.tank.comfort, s.tank.model, final.q, final.tankE, t);
      if (qt > TOL) parts.push(`${s.tank.id} ${qt.toFixed(2)} kWh${forComfort ? ` for ${forComfort.label} (≥ ${forComfort.tempC} °C)` : ''}`);
      if (Math.abs(extra) > TOL) {
        tank.runOnKWh = extra;
        parts.push(extra > 0 ? `${extra.toFixed(2)} kWh more: heats on to ${input.tank!.maxC} °C (paid to consume)` : `${(-extra).toFixed(2)} kWh less: the tank is full from heating on`);
      }
    }
    if (s.ev) {
      charged += et * eff;
      // A car that leaves (or arrives) inside the slot charges at this power while it is there.
      const evHours = Math.min(hours, s.ev.availHours[t] as number);
      const leaves = input.ev && input.ev.departureMs > ps.startMs && input.ev.departureMs < ps.endMs ? { leavesMs: input.ev.departureMs } : {};
      out.evs = { [s.ev.id]: { energyKWh: et + before(input.ev), powerKW: evHours > 0 ? et / evHours : 0, on: final.evOn[t] === true || et > TOL, chargedKWh: charged, ...leaves } };
      if (et > TOL) parts.push(`${s.ev.id} ${et.toFixed(2)} kWh`);
    }
    const priceText = `${ps.price.toFixed(4)} ${input.currency}/kWh (rank ${rank[t]}/${s.n}` +
      `${ps.delta !== 0 ? `, delta ${ps.delta >= 0 ? '+' : ''}${ps.delta.toFixed(4)}` : ''}, ${ps.source})`;
    out.reason = `${parts.length > 0 ? parts.join(', ') : 'idle'} at ${priceText}` +
      (out.binding.length > 0 ? `; bound by ${out.binding.join(', ')}` : '');
    return out;
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
  if (s.tank) {
    const outcome: TankOutcome = {
      startTempC: s.tank.startTempC,
      tempSource: s.tank.tempSource,
      legionellaAtMs: final.legionellaSlot >= 0 ? (s.slots[final.legionellaSlot]?.startMs ?? null) : null,
    };
    if (s.tank.comfort.length > 0) outcome.comfort = comfortOutcomes(s.tank.comfort, s.slots, s.tank.model, final.tankE);
    result.tanks = { [s.tank.id]: outcome };
  }
  const e = input.ev;
  if (s.ev && e) {
    const needFrom = e.energyNeededKWh === undefined && e.socPct !== undefined
      ? { socPct: e.socPct, targetSocPct: e.targetSocPct ?? 0, capacityKWh: e.capacityKWh ?? 0 }
      : { estimateKWh: e.energyNeededKWh ?? 0 };
    result.evs = { [s.ev.id]: { energyNeededKWh: s.ev.needGrid * eff, departureMs: e.departureMs, needFrom } };
  }
  return result;
}
