import { describe, expect, it } from 'vitest';
import { createLogger } from '../log.js';
import { decide, type ChargerNow } from '../core/control.js';
import { PHASE_CONFIRM_TIMEOUT_MS, PHASE_WISH_HOLD_MS, createPhaseControl, wantedChargerKw, type PhaseTick } from './phase-control.js';

function captureLogger() {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({ level: 'debug', destination: { write: (l: string) => void lines.push(JSON.parse(l)) } });
  return { logger, lines };
}

const minute = 60_000;
const options = (fuse1A: number, fuse3A: number) => [
  { phases: 1 as const, wattsPerAmp: 230, fuseMaxA: fuse1A },
  { phases: 3 as const, wattsPerAmp: 690, fuseMaxA: fuse3A },
];
const tick = (over: Partial<PhaseTick>): PhaseTick => ({
  id: 'car',
  nowMs: 0,
  reported: 3,
  wired: 3,
  available: true,
  wantKw: Infinity,
  minCurrentA: 6,
  maxCurrentA: 16,
  options: options(Infinity, Infinity),
  minIntervalMs: 10 * minute,
  ...over,
});

describe('phase control', () => {
  it('switches once the wish has held, at most once per minimum interval, pausing until the charger reports the new phases', () => {
    const log = captureLogger();
    const pc = createPhaseControl(log.logger);
    expect(pc.step(tick({ nowMs: 0 }))).toEqual({ actual: 3, phases: 3, command: 3 });
    // The fuse leaves 3 phases 4 A: the wish for 1 phase must hold PHASE_WISH_HOLD_MS first.
    const tight = options(12, 4);
    expect(pc.step(tick({ nowMs: minute, options: tight }))).toEqual({ actual: 3, phases: 3, command: 3 });
    // One tick of room in between starts the wish over.
    expect(pc.step(tick({ nowMs: minute + 10_000 }))).toEqual({ actual: 3, phases: 3, command: 3 });
    expect(pc.step(tick({ nowMs: minute + 20_000, options: tight }))).toEqual({ actual: 3, phases: 3, command: 3 });
    const t1 = minute + 20_000 + PHASE_WISH_HOLD_MS;
    expect(pc.step(tick({ nowMs: t1, options: tight }))).toMatchObject({
      actual: 3,
      phases: 1,
      pausedFor: expect.stringMatching(/^switching to 1 phase: full power wanted: the fuse leaves 3-phase less than 6 A/),
    });
    expect(pc.step(tick({ nowMs: t1 + 10_000, options: tight }))).toMatchObject({ phases: 1, pausedFor: 'switching to 1 phase: paused' });
    expect(pc.step(tick({ nowMs: t1 + 20_000, options: tight, reported: 1 }))).toEqual({ actual: 1, phases: 1, command: 1 });
    // Room returns at once, but the next switch waits for the interval: every tick until then stays 1-phase.
    for (let t = t1 + 30_000; t < t1 + 10 * minute; t += 10_000)
      expect(pc.step(tick({ nowMs: t, reported: 1 }))).toEqual({ actual: 1, phases: 1, command: 1 });
    expect(pc.step(tick({ nowMs: t1 + 10 * minute, reported: 1 }))).toMatchObject({
      phases: 3,
      pausedFor: expect.stringMatching(/^switching to 3 phases/),
    });
    const switches = log.lines.filter((l) => l.msg === 'phase switch');
    expect(switches.map((l) => [l.from, l.to])).toEqual([
      [3, 1],
      [1, 3],
    ]);
    expect(switches[0]?.reason).toMatch(/fuse leaves 3-phase less than 6 A/);
  });

  it('gives a switch up when the charger does not confirm it, and charges on what it reports', () => {
    const log = captureLogger();
    const pc = createPhaseControl(log.logger);
    pc.step(tick({ nowMs: 0, wantKw: 2 }));
    expect(pc.step(tick({ nowMs: PHASE_WISH_HOLD_MS, wantKw: 2 }))).toMatchObject({
      phases: 1,
      pausedFor: expect.stringMatching(/^switching to 1 phase/),
    });
    expect(pc.step(tick({ nowMs: PHASE_WISH_HOLD_MS + 1000, wantKw: 2 }))).toMatchObject({ pausedFor: 'switching to 1 phase: paused' });
    expect(pc.step(tick({ nowMs: PHASE_WISH_HOLD_MS + PHASE_CONFIRM_TIMEOUT_MS, wantKw: 2 }))).toEqual({ actual: 3, phases: 3, command: 3 });
    expect(log.lines.filter((l) => l.code === 'PHASE_SWITCH_UNCONFIRMED')).toHaveLength(1);
    // And no new switch before the interval, however long the wish holds.
    for (let t = 0; t < 5; t++)
      expect(pc.step(tick({ nowMs: PHASE_WISH_HOLD_MS + PHASE_CONFIRM_TIMEOUT_MS + (t + 1) * 10_000, wantKw: 2 }))).toEqual({
        actual: 3,
        phases: 3,
        command: 3,
      });
  });

  it('does not switch an unavailable charger, nor an idle one', () => {
    const pc = createPhaseControl(captureLogger().logger);
    expect(pc.step(tick({ available: false, wantKw: 2 }))).toEqual({ actual: 3, phases: 3, command: 3 });
    expect(pc.step(tick({ wantKw: 0, options: options(12, 4) }))).toEqual({ actual: 3, phases: 3, command: 3 });
    expect(pc.actual('car', undefined, 3)).toBe(3);
    // A charger that has not said its phases gets no phase write until wattshift switches it.
    expect(createPhaseControl(captureLogger().logger).step(tick({ reported: undefined }))).toEqual({ actual: 3, phases: 3 });
    expect(pc.actual('car', 1, 3)).toBe(1);
  });

  it("wants what decide() would run: nothing unplugged or off, the room in boost, the plan's power while the slot runs", () => {
    const planned = { energyKwh: 2, powerKw: 2 };
    expect(wantedChargerKw({ plugged: false, mode: 'boost', planned, slotEnergyKwh: 0, roomKw: 9 })).toBe(0);
    expect(wantedChargerKw({ plugged: true, mode: 'off', planned, slotEnergyKwh: 0, roomKw: 9 })).toBe(0);
    expect(wantedChargerKw({ plugged: true, mode: 'boost', planned, slotEnergyKwh: 0, roomKw: 9 })).toBe(9);
    expect(wantedChargerKw({ plugged: true, mode: 'auto', planned, slotEnergyKwh: 0, roomKw: 9 })).toBe(2);
    expect(wantedChargerKw({ plugged: true, mode: 'auto', planned, slotEnergyKwh: 2, roomKw: 9 })).toBe(0);
    expect(wantedChargerKw({ plugged: true, mode: 'auto', planned, slotEnergyKwh: 0, roomKw: 1.5 })).toBe(1.5);
  });
});

describe('decide with a phase command', () => {
  const charger: ChargerNow = {
    kind: 'evCharger',
    id: 'car',
    available: true,
    mode: 'boost',
    plugged: true,
    powerW: 0,
    slotEnergyKwh: 0,
    planned: null,
    phases: 1,
    voltageV: 230,
    minCurrentA: 6,
    maxCurrentA: 16,
    safeCurrentA: 6,
    wattsPerAmp: 230,
    fuse: { maxA: 12, reason: 'main fuse 25 A: L1 at 12.0 A' },
  };
  const site = { capKw: 17, locationPowerW: undefined, baseLoadKw: 0.5 };

  it('pauses (0 A) across a switch whatever the mode asks, and carries the phases to set', () => {
    expect(decide([{ ...charger, phaseCommand: { phases: 1, pausedFor: 'switching to 1 phase: paused' } }], site).setpoints).toEqual([
      { kind: 'charger', id: 'car', currentA: 0, reason: 'switching to 1 phase: paused', phases: 1 },
    ]);
  });

  it("sets the current for the chosen phases under that phase count's fuse limit", () => {
    expect(decide([{ ...charger, phaseCommand: { phases: 1 } }], site).setpoints).toEqual([
      { kind: 'charger', id: 'car', currentA: 12, reason: 'main fuse 25 A: L1 at 12.0 A', phases: 1 },
    ]);
    // Without a phase command the setpoint is as before: no phases.
    expect(decide([charger], site).setpoints[0]).not.toHaveProperty('phases');
  });
});
