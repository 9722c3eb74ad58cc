import { describe, expect, it } from 'vitest';
import { createLogger } from '../log.js';
import { createFuseGuard } from './fuse-guard.js';

const logger = createLogger({ level: 'silent' });
// IT 3×230 V: a 3-phase charger draws √3·230 W per amp. A slow HAN reader: readings count for 10 minutes.
const fuse = {
  mainFuseA: 25,
  phases: 3 as const,
  supply: 'IT' as const,
  meter: 'han',
  marginA: 2,
  raiseAfterS: 60,
  staleAfterS: 600,
  singlePhaseChargerLine: 1 as const,
};
const wPerA = Math.sqrt(3) * 230;
const t0 = 1_000_000;
const tick = 10_000;
const reading = (currentsA: number[], atMs: number) => ({ currentsA, voltagesV: [], atMs });
const charger = (id: string, amps: number) => ({ id, phases: 3 as const, voltageV: 230, safeCurrentA: 6, powerW: amps * wPerA });

describe('fuse guard: a reading older than the last tick', () => {
  it('adds what the chargers rose by since the first tick after the reading, as a fresh reading would show it', () => {
    const guard = createFuseGuard(fuse, logger);
    // The house draws 6 A on each line; the reading is taken just before the first tick and then stalls.
    const old = reading([6, 6, 6], t0 - 1_000);
    guard.limitFor(charger('a', 0), old, t0);
    expect(guard.limitFor(charger('b', 0), old, t0).maxA).toBe(17); // alone: 25 − 2 − 6
    // Next tick: car A charges at 6 A; the reading is the same. Then car B starts too.
    guard.limitFor(charger('a', 6), old, t0 + tick);
    guard.limitFor(charger('b', 0), old, t0 + tick);
    const both = [charger('a', 6), charger('b', 6)];
    const stale = guard.limitFor(charger('b', 6), old, t0 + 2 * tick, both);
    // The lines carry 6 + 6 + 6 = 18 A: B may keep its 6 A and half of the 5 A free, as a fresh reading gives.
    const fresh = createFuseGuard(fuse, logger).limitFor(charger('b', 6), reading([18, 18, 18], t0 + 2 * tick - 500), t0 + 2 * tick, both);
    expect(fresh.maxA).toBeCloseTo(8.5, 9);
    expect(stale.maxA).toBeCloseTo(fresh.maxA, 9);
  });

  it('adds a rise of a charger that does not say its phases as the most it may put on each line', () => {
    const guard = createFuseGuard({ ...fuse, supply: 'TN' }, logger);
    const old = reading([6, 6, 6], t0 - 1_000);
    const uncertain = (watts: number) => ({ id: 'ocpp', phases: 3 as const, voltageV: 230, safeCurrentA: 6, powerW: watts, drawUncertain: true });
    guard.limitFor(uncertain(0), old, t0);
    guard.limitFor(uncertain(0), old, t0 + tick);
    // 3680 W more since the reading: 16 A if it charges on one phase (L1 on TN), 5.3 A a line on three.
    const risen = guard.limitFor({ ...charger('b', 0), phases: 1 }, old, t0 + 2 * tick, [uncertain(3680), { ...charger('b', 0), phases: 1 }]);
    // L1 may carry 6 + 16 = 22 A, leaving 1 A (25 − 2 − 22), shared by the two: half an amp for b
    // (taken as 5.3 A, the least it puts on L1, b would be given 5.8 A).
    expect(risen.maxA).toBeCloseTo(0.5, 9);
  });

  it('takes a reading from since the last tick as it is, and credits no fall before a reading shows it', () => {
    const guard = createFuseGuard(fuse, logger);
    guard.limitFor(charger('a', 0), reading([6, 6, 6], t0 - 1_000), t0);
    // The last tick raised car A to 10 A; a reading taken after that tick holds whatever of it has ramped.
    expect(guard.limitFor(charger('a', 10), reading([16, 16, 16], t0 + 5_000), t0 + tick).maxA).toBe(17); // 25 − 2 − 6
    // A falls to 0 A after the reading: until a reading shows it, its 10 A stays on the lines as house load.
    guard.limitFor(charger('a', 10), reading([16, 16, 16], t0 + 5_000), t0 + 2 * tick);
    const fell = guard.limitFor(charger('a', 0), reading([16, 16, 16], t0 + 5_000), t0 + 3 * tick);
    expect(fell.maxA).toBe(7); // 25 − 2 − 16
  });
});

describe('fuse guard: no phase currents yet', () => {
  function captured() {
    const lines: Record<string, unknown>[] = [];
    return { lines, logger: createLogger({ destination: { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) } }) };
  }

  it("waits for the meter's first list at start without a warning, then warns once when it goes stale", () => {
    const { lines, logger: log } = captured();
    const guard = createFuseGuard({ ...fuse, staleAfterS: 30 }, log);
    expect(guard.limitFor(charger('a', 0), undefined, t0).maxA).toBe(6);
    guard.limitFor(charger('a', 0), undefined, t0 + tick);
    expect(lines.filter((l) => l.level === 'warn')).toEqual([]);
    expect(lines.filter((l) => l.device === 'a').map((l) => l.level)).toEqual(['info']);
    // The first list: the limit rises again after the hold's quiet while, as after any blind spell.
    guard.limitFor(charger('a', 0), reading([6, 6, 6], t0 + 15_000), t0 + 2 * tick);
    guard.limitFor(charger('a', 0), reading([6, 6, 6], t0 + 15_000), t0 + 60_000);
    expect(lines.filter((l) => l.code === 'FUSE_PHASES_UNKNOWN').map((l) => [l.level, l.why])).toEqual([['warn', 'phase currents stale']]);
  });

  it('warns when the meter is still silent after the staleness window', () => {
    const { lines, logger: log } = captured();
    const guard = createFuseGuard({ ...fuse, staleAfterS: 30 }, log);
    guard.limitFor(charger('a', 0), undefined, t0);
    guard.limitFor(charger('a', 0), undefined, t0 + 31_000);
    expect(lines.filter((l) => l.code === 'FUSE_PHASES_UNKNOWN').map((l) => l.level)).toEqual(['warn']);
  });
});
