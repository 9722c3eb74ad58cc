import { describe, expect, it } from 'vitest';
import { createLogger } from '../log.js';
import { createFuseGuard } from './fuse-guard.js';

const logger = createLogger({ level: 'silent' });
const fuse = {
  mainFuseA: 25,
  phases: 3 as const,
  supply: 'TN' as const,
  meter: 'han',
  marginA: 1,
  raiseAfterS: 60,
  staleAfterS: 30,
  singlePhaseChargerLine: 1 as const,
};
const at = 1_000_000;
const reading = (currentsA: number[]) => ({ currentsA, voltagesV: [], atMs: at });

describe('fuse guard: the limit of the other phase count', () => {
  it("takes the charger's draw off the lines it flows on now, not the lines of the phase count asked about", () => {
    const guard = createFuseGuard(fuse, logger);
    // Charging 3-phase at 10 A (6.9 kW); the house draws 4 A on L1 and 12 A on L2 and L3.
    const car = { id: 'car', voltageV: 230, safeCurrentA: 6, powerW: 6900 };
    const phases = reading([14, 22, 22]);
    expect(guard.limitFor({ ...car, phases: 3 }, phases, at).maxA).toBe(12); // L2: 25 − 1 − 12
    // On 1 phase (L1) the house leaves 25 − 1 − 4 = 20 A; the 3-phase draw is not taken for 30 A on L1.
    expect(guard.limitFor({ ...car, phases: 1, drawPhases: 3 }, phases, at).maxA).toBe(20);
    // Charging 1-phase at 16 A (3.68 kW) on L1; asked about 3 phases: L2 and L3 carry no charger current.
    const one = { ...car, powerW: 3680 };
    expect(guard.limitFor({ ...one, phases: 3, drawPhases: 1 }, reading([20, 12, 3]), at).maxA).toBe(12);
  });

  it('on IT a 1-phase charger sits on two lines: its draw comes off both', () => {
    const guard = createFuseGuard({ ...fuse, supply: 'IT' }, logger);
    const car = { id: 'car', voltageV: 230, safeCurrentA: 6, powerW: 230 * 10 };
    // 1-phase at 10 A between L1 and L2; house 4 A on L1, 6 A on L2, 15 A on L3. 3-phase: L3 leaves 9 A.
    expect(guard.limitFor({ ...car, phases: 3, drawPhases: 1 }, reading([14, 16, 15]), at).maxA).toBe(9);
  });

  it('a charger that does not say its phases: its draw comes off a line only as far as it surely flows there', () => {
    const guard = createFuseGuard(fuse, logger);
    // 3680 W: 16 A on L1 if 1-phase, 5.3 A on each line if 3-phase. Lines 20, 7.3, 7.3 A measured.
    const car = { id: 'car', voltageV: 230, safeCurrentA: 6, powerW: 3680, drawUncertain: true };
    const phases = reading([20, 7.3, 7.3]);
    // 1 phase: L1's house is taken as 20 − 5.33 = 14.7 A (not 20 − 16 = 4 A): 25 − 1 − 14.7 = 9.3 A.
    expect(guard.limitFor({ ...car, phases: 1, drawPhases: 1 }, phases, at).maxA).toBeCloseTo(24 - (20 - 3680 / 690), 6);
    // 3 phases: L2 and L3 keep all of their 7.3 A as house load: 25 − 1 − 7.3 = 16.7 A; L1 leaves 9.3 A.
    expect(guard.limitFor({ ...car, phases: 3, drawPhases: 1 }, phases, at).maxA).toBeCloseTo(24 - (20 - 3680 / 690), 6);
  });
});

describe('fuse guard: a line current no home can carry', () => {
  it('counts the line as not measured (the safe current), never as an empty line', () => {
    const car = { id: 'car', phases: 3 as const, voltageV: 230, safeCurrentA: 6, powerW: 6900 };
    for (const l1 of [-1000, -0.5, 1e9, Number.POSITIVE_INFINITY]) {
      const limit = createFuseGuard(fuse, logger).limitFor(car, reading([l1, 12, 12]), at);
      expect(limit.maxA, String(l1)).toBe(6);
      expect(limit.reason, String(l1)).toBe('main fuse: L1 current not measured, safe current');
    }
  });
});
