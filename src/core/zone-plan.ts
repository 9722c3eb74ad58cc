/**
 * A heated zone planned as a storage, like a tank: its state is the heat in the room over 0 °C,
 * E = C·T (kWh), and over a slot of h hours, exactly for a constant heater output and outdoor
 * temperature,
 *
 *   E' = a·E − k + β·q,   a = exp(−UA·h/C),   k = −(1 − a)·C·(T_out + G/UA),   β = (1 − a)·C·cop/(UA·h)
 *
 * with q the heater's electric energy in the slot. The solvers see the heat β·q at the price
 * price/β. The comfort band's lower edge is the floor of each slot (soft, at the planner's
 * shortfall penalty), the frost floor a harder one (ten times that), the band's upper edge a ceiling
 * the heater never heats beyond. Pure.
 */
import { solveStorage, type StorageProblem } from './convex-dp.js';
import { dominanceWeights, solveDiscrete } from './discrete-dp.js';
import { costPieces } from './pwl.js';
import { frozenRest, lowestCapKw } from './plan-setup-steps.js';
import { localParts } from './zoned-time.js';
import type { Setup, SolverWorkspace } from './plan-setup.js';
import type { AntiCycling, BindingConstraint, LpcCap, Plan, PlanSlot, Shortfall, ZoneOutcome, ZoneParams, ZoneSlotPlan } from './types.js';

/** The frost floor's penalty per kWh below it, as a multiple of the band's. */
export const FROST_PENALTY_FACTOR = 10;
const TOL = 1e-6;

export interface ZoneSetup {
  id: string;
  zone: ZoneParams;
  /** Heat capacity, kWh/K; state E = C·T. */
  c: number;
  startTempC: number;
  tempSource: ZoneOutcome['tempSource'];
  a: number;
  k: number[];
  /** Heat (kWh of E) per electric kWh, per slot. */
  beta: number[];
  e0: number;
  eLow: number;
  eMax: number;
  /** The ceiling of each slot: the band's upper edge, or what the room keeps without heat from above it. */
  eMaxAt: number[];
  /** What the plan holds the room to at each slot's end: the slot's lower edge, or the next slot's where that is warmer (soft, at `penalty`). */
  floor: number[];
  /**
   * The slot's own lower edge: what a shortfall is counted against and what a thermostat alone
   * holds. A room short of the next band's edge at a slot's end (only where a cap or a capacity
   * hold leaves too little) reaches it a slot late, as a thermostat would; that is not reported.
   */
  bandFloor: number[];
  frost: number[];
  /** The heater's largest electric energy per slot: power, zone caps, headroom. */
  cap: number[];
  /** Whether a zone-scoped LPC cap is below the heater's power in the slot. */
  zoneCapped: boolean[];
  /** The heater's full-slot energy (a relay's one "on" level). */
  full: number[];
  price: number[];
  penalty: number;
  frostPenalty: number;
  /** Index of the setup's first slot in the zone's per-slot arrays (slots already ended before it). */
  offset: number;
  /** The anti-cycling rules that can bind (see `bindingAntiCycling`), or null. */
  antiCycling: AntiCycling | null;
  /** The previous plan's energy in a frozen slot (the rest of the slot, kWh), undefined where free. */
  fixed: (number | undefined)[];
}

const gainsAt = (z: ZoneParams, i: number): number => (typeof z.gainsKw === 'number' ? z.gainsKw : (z.gainsKw?.[i] ?? 0));
/** The zone's per-slot array at input index `i`, the last value held past its end. */
const at = <T>(xs: ReadonlyArray<T>, i: number): T => xs[Math.min(i, xs.length - 1)] as T;

/** A zone-scoped cap binds a zone when it names it or no zone. */
export const zoneCapBinds = (c: LpcCap, id: string): boolean => c.scope === 'zone' && (c.deviceId === undefined || c.deviceId === id);

/**
 * The zone's storage over the location set-up's slots (`s`, planned without devices: its
 * headroom is the location's). `offset`: how many of the input's slots ended before the plan;
 * `frozen`: the previous plan's frozen slots by start (see `frozenPrevious`).
 */
export function setupZone(
  z: ZoneParams,
  s: Setup,
  offset: number,
  lpc: ReadonlyArray<LpcCap>,
  antiCycling: AntiCycling | null,
  frozen: ReadonlyMap<number, PlanSlot> = new Map(),
): ZoneSetup {
  const m = z.model;
  const c = m.heatCapacityKwhPerK;
  const ua = m.heatLossKwPerK;
  const cop = z.cop ?? 1;
  const idx = (t: number): number => t + offset;
  const firstBand = at(z.band, idx(0));
  const measured = z.currentTempC !== null && Number.isFinite(z.currentTempC);
  const startTempC = measured ? (z.currentTempC as number) : Math.max(firstBand.minC, z.frostC);
  const hoursAt = (t: number): number => s.slotHours * (s.fraction[t] as number);
  const aFull = Math.exp((-ua * s.slotHours) / c);
  const e0 = c * startTempC;
  const k: number[] = [];
  const beta: number[] = [];
  for (let t = 0; t < s.n; t++) {
    const h = hoursAt(t);
    const aT = Math.exp((-ua * h) / c);
    const drift = (1 - aT) * c * (at(z.outdoorTempC, idx(t)) + gainsAt(z, idx(t)) / ua);
    // The solvers use one retention `a`; a shorter first slot is exact through k, its start being known.
    k.push(t === 0 ? (aFull - aT) * e0 - drift : -drift);
    beta.push(h > 0 ? ((1 - aT) * c * cop) / (ua * h) : 0);
  }
  // A slot's end is the next slot's start: where a warmer band starts with the next slot, the room
  // has the room within it by then, not only an hour later (a bathroom floor at 22 °C from 06:00).
  const own = s.slots.map((_, t) => at(z.band, idx(t)));
  const bands = own.map((b, t) => {
    const next = at(z.band, idx(t + 1));
    return next.minC > b.minC ? { minC: next.minC, maxC: Math.max(b.maxC, next.maxC) } : b;
  });
  const coldest = Math.min(startTempC, z.frostC, ...s.slots.map((_, t) => at(z.outdoorTempC, idx(t))));
  const eMax = c * Math.max(startTempC, ...bands.map((b) => b.maxC));
  const eMaxAt: number[] = [];
  let ceiling = e0;
  for (let t = 0; t < s.n; t++) {
    ceiling = Math.min(eMax, Math.max(c * (bands[t] as { maxC: number }).maxC, aFull * ceiling - (k[t] as number)));
    eMaxAt.push(ceiling);
  }
  const full = s.slots.map((_, t) => z.powerKw * hoursAt(t));
  const zoneCapKw = s.slots.map((slot) => lowestCapKw(lpc, slot, (cap) => zoneCapBinds(cap, z.id)));
  const cap = full.map((f, t) => Math.max(0, Math.min(f, (zoneCapKw[t] as number) * hoursAt(t), s.headroomE[t] as number)));
  const known = s.slots.filter((p) => p.source !== 'fallback');
  const meanKnown = known.length > 0 ? known.reduce((x, p) => x + p.price, 0) / known.length : 0;
  return {
    id: z.id,
    zone: z,
    c,
    startTempC,
    tempSource: measured ? 'measured' : 'assumed',
    a: aFull,
    k,
    beta,
    e0,
    eLow: c * (coldest - 1),
    eMax,
    eMaxAt,
    floor: bands.map((b) => c * b.minC),
    bandFloor: own.map((b) => c * b.minC),
    frost: s.slots.map(() => c * z.frostC),
    cap,
    zoneCapped: zoneCapKw.map((cap) => cap < z.powerKw - TOL),
    full,
    price: s.slots.map((p) => (p.source === 'fallback' ? meanKnown : p.price)),
    penalty: s.penalty,
    frostPenalty: FROST_PENALTY_FACTOR * s.penalty,
    offset,
    antiCycling,
    fixed: s.slots.map((slot, t) => frozenRest(frozen.get(slot.startMs)?.zones?.[z.id], t === 0 ? z.slotDeliveredKwh : 0, cap[t] as number)),
  };
}

export interface ZoneSolution {
  /** Electric energy per slot, kWh (the rest of the slot). */
  q: number[];
  /** Heat state at the end of each slot, kWh (C·T). */
  e: number[];
  on: boolean[];
}

/**
 * The zone's cheapest plan within `cap` (electric kWh per slot), the solver seeing price + λ.
 * A continuous zone by the exact convex DP; a relay zone (whole slots on or off) or one with
 * anti-cycling rules by the discrete DP.
 */
export function zoneSolve(
  z: ZoneSetup,
  cap: ReadonlyArray<number>,
  dayIndex: ReadonlyArray<number>,
  lambda?: ReadonlyArray<number>,
  ws?: SolverWorkspace,
): ZoneSolution {
  const priceAt = (t: number): number => (z.price[t] as number) + (lambda?.[t] ?? 0);
  const heatPrice = (t: number): number => ((z.beta[t] as number) > 0 ? priceAt(t) / (z.beta[t] as number) : 0);
  const ac = z.antiCycling;
  const common = { a: z.a, k: z.k, e0: z.e0, eMax: z.eMax, eLow: z.eLow, floor: z.floor, terminal: z.eLow, penalty: z.penalty };
  const hardFloor = { floor: z.frost, penalty: z.frostPenalty };
  let heat: { q: number[]; e: number[] };
  if (z.zone.control === 'continuous' && !ac) {
    const p: StorageProblem = {
      ...common,
      // A frozen slot takes its energy but for what the band's top leaves room for (the heater's
      // thermostat stops there): up to it, at a price below any penalty.
      costs: cap.map((hi, t) => {
        const f = z.fixed[t];
        return f === undefined
          ? costPieces(0, 0, [[hi * (z.beta[t] as number), heatPrice(t)]])
          : costPieces(0, 0, [[Math.min(f, hi) * (z.beta[t] as number), -z.frostPenalty]]);
      }),
      hardFloor,
      eMaxAt: z.eMaxAt,
    };
    heat = solveStorage(p, undefined, ws?.storage);
  } else {
    const levels = cap.map((hi, t) => {
      const b = z.beta[t] as number;
      if (z.zone.control === 'relay') return (z.full[t] as number) > 0 && hi + TOL >= (z.full[t] as number) ? [(z.full[t] as number) * b] : [];
      return hi > TOL ? [(hi * b) / 4, (hi * b) / 2, (3 * hi * b) / 4, hi * b] : [];
    });
    heat = solveDiscrete(
      {
        ...common,
        hardFloor,
        eMaxAt: z.eMaxAt,
        onLevels: levels,
        fixed: z.fixed.map((f, t) => (f === undefined ? undefined : Math.min(f, cap[t] as number) * (z.beta[t] as number))),
        cost: (t, q) => heatPrice(t) * q,
        // A state grid of 0.1 K, from 2 K below the lowest floor (colder states are merged there:
        // they only occur when the room cannot be held anyway); the exact range made a relay zone's
        // solve some ten times slower.
        eLow: Math.max(z.eLow, Math.min(z.e0, ...z.frost, ...z.floor) - 2 * z.c),
        step: 0.1 * z.c,
        minOnSlots: ac?.minOnSlots,
        minOffSlots: ac?.minOffSlots,
        maxStartsPerDay: ac?.maxStartsPerDay,
        dayIndex,
        // A warmer room is never worse but for what its heat saves later where heat earns money
        // (a negative price): the DP keeps only the states no warmer, cheaper one dominates
        // (some ten a slot instead of a few hundred). The most a kWh of heat held can lose after
        // slot t is the best later negative price: it saves the room at most that much heat.
        ...(ac ? {} : { dominance: dominanceWeights(cap.length, heatPrice) }),
      },
      ws?.discrete,
    );
  }
  const q = heat.q.map((v, t) => ((z.beta[t] as number) > 0 ? v / (z.beta[t] as number) : 0));
  return { q, e: heat.e, on: q.map((v) => v > TOL) };
}

/** The zone's cost at the plain prices, a room below its band or frost floor at their penalties. */
export function zoneCost(z: ZoneSetup, sol: ZoneSolution): number {
  let v = 0;
  sol.q.forEach((q, t) => {
    const e = sol.e[t] as number;
    v += (z.price[t] as number) * q + z.penalty * Math.max(0, (z.floor[t] as number) - e) + z.frostPenalty * Math.max(0, (z.frost[t] as number) - e);
  });
  return v;
}

/**
 * "Thermostats alone": the heater's own thermostat holding the band's lower edge at full power
 * (by default no caps: what the room would do without wattshift), from the zone's start.
 */
export function zoneBaseline(z: ZoneSetup, cap: ReadonlyArray<number> = z.full): ZoneSolution {
  const q: number[] = [];
  const e: number[] = [];
  let state = z.e0;
  z.k.forEach((k, t) => {
    const base = z.a * state - k;
    const b = z.beta[t] as number;
    const need = b > 0 ? Math.max(0, ((z.bandFloor[t] as number) - base) / b) : 0;
    const qt = Math.min(cap[t] as number, need);
    q.push(qt);
    state = base + b * qt;
    e.push(state);
  });
  return { q, e, on: q.map((v) => v > TOL) };
}

/** "HH:MM" local. */
function clock(ms: number, timezone: string): string {
  const p = localParts(ms, timezone);
  return `${String(p.hour).padStart(2, '0')}:${String(p.minute).padStart(2, '0')}`;
}

/** Whether the room cools over slot `t` (it coasts on the heat it holds). */
function cools(z: ZoneSetup, sol: ZoneSolution, t: number): boolean {
  const before = t === 0 ? z.e0 : (sol.e[t - 1] as number);
  return (sol.e[t] as number) < before - 1e-3 * z.c;
}

/** Why the zone heats as it does in slot `t`: pre-heating ahead of a span it then coasts through, coasting, or holding the band. */
function zoneReason(z: ZoneSetup, sol: ZoneSolution, s: Setup, timezone: string, t: number): string | null {
  const q = sol.q[t] as number;
  const before = t === 0 ? z.e0 : (sol.e[t - 1] as number);
  const above = (sol.e[t] as number) > (z.floor[t] as number) + 1e-3 * z.c;
  const energy = q > TOL ? ` ${q.toFixed(2)} kWh,` : '';
  if (above && (sol.e[t] as number) > before + 1e-3 * z.c) {
    // The span it heats ahead of: the next slots the room cools through.
    let from = t + 1;
    while (from < s.n && !cools(z, sol, from)) from++;
    let to = from;
    while (to + 1 < s.n && cools(z, sol, to + 1)) to++;
    const span = from < s.n ? ` before ${clock(s.slots[from]!.startMs, timezone)}–${clock(s.slots[to]!.endMs, timezone)} peak` : ' within band';
    return `${z.id}${energy} pre-heat${span}`;
  }
  if (above && cools(z, sol, t)) return `${z.id}${energy} coast within band`;
  return q > TOL ? `${z.id}${energy} hold ${((z.floor[t] as number) / z.c).toFixed(1)} °C` : null;
}

/** The zone's shortfalls: slots below the band (and why) and below the frost floor. */
function zoneShortfalls(z: ZoneSetup, sol: ZoneSolution, s: Setup): Shortfall[] {
  const out: Shortfall[] = [];
  const worst = (floor: ReadonlyArray<number>): { first: number; worstK: number } => {
    let first = -1;
    let worstK = 0;
    sol.e.forEach((e, t) => {
      const d = ((floor[t] as number) - e) / z.c;
      if (d > 1e-3) {
        if (first < 0) first = t;
        worstK = Math.max(worstK, d);
      }
    });
    return { first, worstK };
  };
  const band = worst(z.bandFloor);
  if (band.first >= 0) {
    const t = band.first;
    // Why: a cap in any slot below the band (or just before it), else the start or the heater's size.
    const below = z.bandFloor.map(
      (f, u) => (u + 1 < s.n && (z.bandFloor[u + 1] as number) - (sol.e[u + 1] as number) > 1e-3 * z.c) || f - (sol.e[u] as number) > 1e-3 * z.c,
    );
    const limited = (u: number): boolean => below[u] === true && (z.cap[u] as number) < (z.full[u] as number) - TOL;
    const slotsLimited = z.cap.map((_, u) => u).filter(limited);
    const why = slotsLimited.some((u) => s.lpcBinding[u] === true || z.zoneCapped[u] === true)
      ? 'a power limitation (LPC) caps the heater'
      : slotsLimited.length > 0
        ? 'the location limit leaves the heater too little'
        : t === 0 && z.startTempC < (z.bandFloor[0] as number) / z.c
          ? `the room starts at ${z.startTempC.toFixed(1)} °C`
          : 'the heater is too small for the cold';
    out.push({
      device: 'zone',
      deviceId: z.id,
      kind: 'belowBand',
      atMs: s.slots[t]!.startMs,
      amount: band.worstK,
      message: `${z.id} expected up to ${band.worstK.toFixed(1)} K below its comfort band: ${why}`,
    });
  }
  const frost = worst(z.frost);
  if (frost.first >= 0)
    out.push({
      device: 'zone',
      deviceId: z.id,
      kind: 'belowFrost',
      atMs: s.slots[frost.first]!.startMs,
      amount: frost.worstK,
      message: `${z.id} expected up to ${frost.worstK.toFixed(1)} K below its ${z.zone.frostC} °C frost floor (not enough power or headroom)`,
    });
  return out;
}

/**
 * The zone's part of the home plan as a plan of its own (merged beside the tanks' and cars'):
 * each slot's energy, power and end temperature, its band, the reason, the baseline.
 */
export function zonePlan(z: ZoneSetup, sol: ZoneSolution, s: Setup, input: { timezone: string; currency: string }, nowMs: number): Plan {
  const base = zoneBaseline(z);
  const slots = s.slots.map((ps, t): PlanSlot => {
    const hours = s.slotHours * (s.fraction[t] as number);
    const q = sol.q[t] as number;
    const band = at(z.zone.band, t + z.offset);
    const delivered = t === 0 && ps.startMs < nowMs ? (z.zone.slotDeliveredKwh ?? 0) : 0;
    const slot: ZoneSlotPlan = {
      energyKwh: q + delivered,
      powerKw: hours > 0 ? q / hours : 0,
      on: sol.on[t] === true,
      endTempC: (sol.e[t] as number) / z.c,
      minC: band.minC,
      maxC: band.maxC,
    };
    const binding: BindingConstraint[] = z.fixed[t] !== undefined ? ['frozen'] : [];
    if (q >= (z.cap[t] as number) - TOL && (z.cap[t] as number) < (z.full[t] as number) - TOL)
      binding.push(z.zoneCapped[t] || s.lpcBinding[t] ? (s.reservedBinding[t] ? 'reservedLpc' : 'lpc') : 'locationLimit');
    const part = zoneReason(z, sol, s, input.timezone, t);
    return {
      startMs: ps.startMs,
      endMs: ps.endMs,
      price: ps.price,
      spot: ps.spot,
      delta: ps.delta,
      source: ps.source,
      headroomKw: s.headroomKw[t] as number,
      binding,
      reason: `${part ?? 'idle'} at ${ps.price}`,
      baselineKwh: base.q[t] as number,
      zones: { [z.id]: slot },
    };
  });
  const cost = s.slots.reduce((x, ps, t) => x + ps.price * (sol.q[t] as number), 0);
  return {
    createdMs: nowMs,
    currency: input.currency,
    slotMinutes: Math.round(s.slotMs / 60_000),
    startMs: s.slots[0]?.startMs ?? nowMs,
    endMs: s.slots[s.n - 1]?.endMs ?? nowMs,
    mode: s.allFallback ? 'fallback' : 'optimal',
    slots,
    cost,
    baselineCost: s.slots.reduce((x, ps, t) => x + ps.price * (base.q[t] as number), 0),
    baselineRespectsLimits: base.q.every((q, t) => q <= (z.cap[t] as number) + TOL),
    incentiveEarned: -s.slots.reduce((x, ps, t) => x + ps.delta * (sol.q[t] as number), 0),
    shortfalls: zoneShortfalls(z, sol, s),
    zones: {
      [z.id]: {
        startTempC: z.startTempC,
        tempSource: z.tempSource,
        model: z.zone.model,
        ...(z.zone.outdoorSource ? { outdoorSource: z.zone.outdoorSource } : {}),
      },
    },
  };
}
