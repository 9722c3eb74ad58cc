import { describe, expect, it } from 'vitest';
import type { Setpoint } from '../core/control.js';
import type { Plan } from '../core/types.js';
import type { ControlSnapshot } from '../jobs/control-loop.js';
import { createDecisionLog, type DecisionLog } from './decision-log.js';

const t0 = Date.UTC(2025, 0, 6);
const slotMs = 15 * 60_000;

const setpoints = (chargerA: number): Setpoint[] => [
  { kind: 'heater', id: 'tank', allow: false, reason: 'expensive slot' },
  { kind: 'charger', id: 'car', currentA: chargerA, phases: 3, reason: 'planned' },
  { kind: 'heatPump', id: 'pump', state: 'normal', reason: 'no plan for it' },
];

const tick = (atMs: number, chargerA: number): ControlSnapshot => ({
  atMs,
  slotStartMs: atMs,
  readings: new Map(),
  slotEnergyKwh: new Map(),
  decision: { setpoints: setpoints(chargerA), expectedDeviceKw: 0, baseLoadKw: 0, guarded: [] },
  locationPowerW: undefined,
  capKw: 11,
});

const plan = (createdMs: number, cost: number): Plan => ({
  createdMs,
  currency: 'EUR',
  slotMinutes: 15,
  startMs: createdMs,
  endMs: createdMs + slotMs,
  mode: 'optimal',
  slots: [
    {
      startMs: createdMs,
      endMs: createdMs + slotMs,
      price: 0.1,
      spot: 0.08,
      delta: 0,
      source: 'actual',
      headroomKw: 7.25,
      binding: [],
      reason: 'cheapest',
    },
  ],
  cost,
  baselineCost: 2,
  baselineRespectsLimits: true,
  incentiveEarned: 0,
  shortfalls: [],
});

/** One short run: a plan, two ticks (the car's current in the second one given), a pump state. */
function run(log: DecisionLog, secondChargerA = 16, cost = 1.25): DecisionLog {
  log.plan(plan(t0, cost));
  log.tick(tick(t0, 16));
  log.tick(tick(t0 + 10_000, secondChargerA));
  log.note('pump', t0 + 20_000, 'boost');
  return log;
}

describe('createDecisionLog', () => {
  it('gives equal digests for equal entries, and another when one setpoint differs', () => {
    const a = run(createDecisionLog());
    const b = run(createDecisionLog());
    const c = run(createDecisionLog(), 10);
    expect(a.digest()).toMatch(/^[0-9a-f]{64}$/);
    expect(b.digest()).toBe(a.digest());
    expect(c.digest()).not.toBe(a.digest());
  });

  it('folds costs rounded to thousandths, so a float off in its last digits gives the same digest', () => {
    expect(run(createDecisionLog(), 16, 1.25 + 1e-12).digest()).toBe(run(createDecisionLog(), 16, 1.25).digest());
    expect(run(createDecisionLog(), 16, 1.26).digest()).not.toBe(run(createDecisionLog(), 16, 1.25).digest());
  });

  it('records a plan once however often it is handed over, and no plan at all', () => {
    const log = createDecisionLog({ keepLines: true });
    log.plan(null);
    log.plan(plan(t0, 1));
    log.plan(plan(t0, 1));
    log.plan(plan(t0 + slotMs, 1));
    expect(log.counts()).toEqual({ plan: 2 });
    expect(log.lines().map((l) => l.split(' ').slice(0, 2).join(' '))).toEqual([
      `plan ${new Date(t0).toISOString()}`,
      `plan ${new Date(t0 + slotMs).toISOString()}`,
    ]);
  });

  it('gives the digest so far without ending the log', () => {
    const log = createDecisionLog();
    log.tick(tick(t0, 16));
    const early = log.digest();
    expect(log.digest()).toBe(early);
    log.tick(tick(t0 + 10_000, 16));
    const whole = createDecisionLog();
    whole.tick(tick(t0, 16));
    whole.tick(tick(t0 + 10_000, 16));
    expect(log.digest()).toBe(whole.digest());
    expect(log.digest()).not.toBe(early);
  });

  it('keeps the entries as lines only when asked to', () => {
    const kept = run(createDecisionLog({ keepLines: true }));
    const unkept = run(createDecisionLog());
    expect(unkept.lines()).toEqual([]);
    expect(kept.lines()).toHaveLength(4);
    expect(kept.lines()[1]).toBe(`tick ${new Date(t0).toISOString()} [["tank",false],["car",16,3],["pump","normal"]]`);
    expect(kept.lines()[3]).toBe(`pump ${new Date(t0 + 20_000).toISOString()} "boost"`);
    expect(kept.counts()).toEqual({ plan: 1, tick: 2, pump: 1 });
    expect(kept.digest()).toBe(unkept.digest());
  });
});
