import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { argminShifted, backwardStep, costPieces, evalPwl, infConv, pwlEnd, Segments, type Pwl } from './pwl.js';

/** A random convex PWL: start, value, and segments with sorted slopes. */
const pwlArb = fc
  .record({
    x0: fc.double({ min: -5, max: 5, noNaN: true }),
    v0: fc.double({ min: -5, max: 5, noNaN: true }),
    segs: fc.array(fc.tuple(fc.double({ min: 0.05, max: 3, noNaN: true }), fc.double({ min: -2, max: 2, noNaN: true })), {
      minLength: 1,
      maxLength: 6,
    }),
  })
  .map(({ x0, v0, segs }): Pwl => {
    const sorted = segs.slice().sort((a, b) => a[1] - b[1]);
    return { x0, v0, len: sorted.map((s) => s[0]), slope: sorted.map((s) => s[1]) };
  });

function bruteMin(f: (y: number) => number, lo: number, hi: number): number {
  let best = Infinity;
  const n = 2000;
  for (let i = 0; i <= n; i++) best = Math.min(best, f(lo + ((hi - lo) * i) / n));
  return best;
}

describe('convex piecewise-linear operations', () => {
  it('infimal convolution equals the brute-force minimum', () => {
    fc.assert(
      fc.property(pwlArb, pwlArb, fc.double({ min: 0, max: 1, noNaN: true }), (f, g, r) => {
        const h = infConv(f, g);
        const x = h.x0 + r * (pwlEnd(h) - h.x0);
        const brute = bruteMin((y) => evalPwl(f, y) + evalPwl(g, x - y), f.x0, pwlEnd(f));
        expect(evalPwl(h, x)).toBeLessThanOrEqual(brute + 1e-9);
        expect(evalPwl(h, x)).toBeGreaterThan(brute - 0.02);
      }),
      { numRuns: 60 },
    );
  });

  it('the fused backward step equals min over q of cost(q) + u(a·E − k + q)', () => {
    fc.assert(
      fc.property(
        pwlArb,
        fc.double({ min: 0.9, max: 1, noNaN: true }),
        fc.double({ min: -1, max: 1, noNaN: true }),
        fc.double({ min: 0.2, max: 2, noNaN: true }),
        fc.double({ min: -0.5, max: 0.5, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (w, a, k, qMax, price, r) => {
          const lo = w.x0 - 1;
          const hi = pwlEnd(w) + 1;
          const floor = (w.x0 + pwlEnd(w)) / 2;
          const cost = costPieces(0, 0, [[qMax, price]]);
          const { u, next } = backwardStep(w, floor, 10, lo, hi, cost, a, k);
          // Domain edges get a rounding tolerance (the step's own): a·E − k + q lands on an edge only
          // up to a few ulps, and a shrunk case put it 1e-9 beyond.
          const evalNear = (f: Pwl, y: number): number => {
            const c = Math.min(Math.max(y, f.x0), pwlEnd(f));
            return evalPwl(f, Math.abs(c - y) <= 1e-7 ? c : y);
          };
          const uAt = (y: number): number => (y < lo - 1e-7 || y > hi + 1e-7 ? Infinity : evalNear(w, y) + 10 * Math.max(0, floor - y));
          expect(evalPwl(u, floor)).toBeCloseTo(uAt(floor), 9);
          const e = next.x0 + r * (pwlEnd(next) - next.x0);
          const brute = bruteMin((q) => price * q + uAt(a * e - k + q), 0, qMax);
          // When no q reaches w's domain from [lo, hi] (it misses by a hair), the step gives a
          // degenerate point instead of an empty function. Planning never gets there: its value
          // functions span the whole state range.
          fc.pre(Number.isFinite(brute));
          expect(evalPwl(next, e)).toBeLessThanOrEqual(brute + 1e-9);
          expect(evalPwl(next, e)).toBeGreaterThan(brute - 0.05);
          // The recovered action attains the value.
          const q = argminShifted(cost, u, a * e - k);
          expect(price * q + evalNear(u, a * e - k + q)).toBeCloseTo(evalPwl(next, e), 6);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('the backward step gives the same functions in buffers that already hold segments', () => {
    const plain = (f: Pwl): object => ({ x0: f.x0, v0: f.v0, len: Array.from(f.len), slope: Array.from(f.slope) });
    fc.assert(
      fc.property(pwlArb, pwlArb, fc.double({ min: 0.2, max: 2, noNaN: true }), (w, junk, qMax) => {
        const cost = costPieces(0, 0, [[qMax, 0.1]]);
        const step = (uOut?: Segments, nextOut?: Segments): { u: Pwl; next: Pwl } =>
          backwardStep(w, w.x0 + 0.5, 10, w.x0 - 1, pwlEnd(w) + 1, cost, 0.98, 0.1, uOut, nextOut);
        const fresh = step();
        // Leftovers, the last one with the slope u starts with (it must not be extended).
        const uOut = new Segments();
        const nextOut = new Segments();
        for (let i = 0; i < junk.len.length; i++) {
          uOut.push(junk.len[i] as number, junk.slope[i] as number);
          nextOut.push(junk.len[i] as number, junk.slope[i] as number);
        }
        uOut.push(1, fresh.u.slope[0] ?? 0);
        const reused = step(uOut, nextOut);
        expect(plain(reused.u)).toEqual(plain(fresh.u));
        expect(plain(reused.next)).toEqual(plain(fresh.next));
      }),
      { numRuns: 60 },
    );
  });
});
