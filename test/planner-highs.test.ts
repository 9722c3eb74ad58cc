import { beforeAll, describe, expect, it } from 'vitest';
import { plan } from '../src/core/planner.js';
import { setupPlan } from '../src/core/plan-setup.js';
import { loadHighs, plannerObjective, referenceModel, scenario, solveReference, type Family, type Highs } from '../scripts/bench-planner.js';
import { hasPriceData, hourlyWindows, loadPriceSeries } from '../scripts/lib/price-data.js';

let highs: Highs;

beforeAll(async () => {
  highs = await loadHighs();
});

describe.runIf(hasPriceData())('planner vs HiGHS on real price windows', () => {
  const series = hasPriceData() ? loadPriceSeries() : [];
  // One window from a few different files (negative hours, spikes, NOK, FI incl. VAT).
  const picks = ['se3_2024-08-05_2024-08-25_eds.csv:SE3', 'dk2_2024-10-07_2024-11-06_eds.csv:DK2', 'no1-no5_2024-08-24_2024-08-28_nok_kwh.csv:NO1', 'fi_2023-10-16_2023-11-05_sahkotin_ckwh_incl_vat.csv:FI'];
  const families: Family[] = ['tank', 'tankRelay', 'ev', 'joint'];
  for (const id of picks) {
    for (const family of families) {
      it(`${family} on ${id} matches the optimum`, () => {
        const sr = series.find((s) => s.id === id);
        expect(sr).toBeDefined();
        const w = hourlyWindows(sr!, 48, 24)[1]!;
        const { input, nowMs } = scenario(family, sr!, w.points, 4242 + families.indexOf(family));
        const p = plan(input, nowMs);
        const s = setupPlan(input, nowMs, undefined);
        const ref = solveReference(highs, referenceModel(s, input));
        expect(ref.feasible).toBe(true);
        expect(p.shortfalls).toEqual([]);
        const mine = plannerObjective(s, p);
        const gap = (mine - ref.objective) / Math.max(Math.abs(ref.objective), 0.5);
        // The reference is the optimum of the same model: never beaten by more than rounding,
        // and matched within 0.5 %.
        expect(gap).toBeGreaterThan(-1e-6);
        expect(gap).toBeLessThan(0.005);
      });
    }
  }
});
