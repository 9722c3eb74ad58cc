/**
 * Convex piecewise-linear functions on a closed interval, stored as a start point and segments
 * of non-decreasing slope. Outside the interval the function is +∞. This is all the exact
 * dynamic programme of the continuous tank needs: adding linear and hinge terms, restricting
 * the domain, an affine change of variable, and infimal convolution (merge of slopes).
 */
export interface Pwl {
  x0: number;
  v0: number;
  len: number[];
  slope: number[];
}

const EPS = 1e-12;

export function pwlEnd(f: Pwl): number {
  let x = f.x0;
  for (const l of f.len) x += l;
  return x;
}

/** A linear function c·(x − x0) + v0 on [x0, x1]. */
export function linear(x0: number, x1: number, v0: number, c: number): Pwl {
  return x1 > x0 ? { x0, v0, len: [x1 - x0], slope: [c] } : { x0, v0, len: [], slope: [] };
}

/** Drops empty segments and joins equal slopes. */
function normalise(len: number[], slope: number[]): { len: number[]; slope: number[] } {
  const L: number[] = [];
  const S: number[] = [];
  for (let i = 0; i < len.length; i++) {
    const l = len[i] as number;
    const s = slope[i] as number;
    if (l <= 1e-13) continue;
    const n = S.length;
    if (n > 0 && Math.abs((S[n - 1] as number) - s) <= EPS * Math.max(1, Math.abs(s))) L[n - 1] = (L[n - 1] as number) + l;
    else {
      L.push(l);
      S.push(s);
    }
  }
  return { len: L, slope: S };
}

export function evalPwl(f: Pwl, x: number): number {
  if (x < f.x0 - 1e-9) return Infinity;
  let v = f.v0;
  let at = f.x0;
  for (let i = 0; i < f.len.length; i++) {
    const l = f.len[i] as number;
    if (x <= at + l) return v + (f.slope[i] as number) * Math.max(0, x - at);
    v += l * (f.slope[i] as number);
    at += l;
  }
  return x <= at + 1e-9 ? v : Infinity;
}

export function addLinear(f: Pwl, c: number): Pwl {
  return { x0: f.x0, v0: f.v0 + c * f.x0, len: f.len.slice(), slope: f.slope.map((s) => s + c) };
}

/** Adds m·max(0, at − x) (m ≥ 0): a soft floor at `at`. */
export function addFloorPenalty(f: Pwl, at: number, m: number): Pwl {
  if (at <= f.x0) return f;
  const len: number[] = [];
  const slope: number[] = [];
  let x = f.x0;
  for (let i = 0; i < f.len.length; i++) {
    const l = f.len[i] as number;
    const s = f.slope[i] as number;
    if (x + l <= at) {
      len.push(l);
      slope.push(s - m);
    } else if (x >= at) {
      len.push(l);
      slope.push(s);
    } else {
      len.push(at - x, x + l - at);
      slope.push(s - m, s);
    }
    x += l;
  }
  const n = normalise(len, slope);
  return { x0: f.x0, v0: f.v0 + m * (at - f.x0), len: n.len, slope: n.slope };
}

/** Restricts the domain to [lo, hi]; null when empty. */
export function restrict(f: Pwl, lo: number, hi: number): Pwl | null {
  const end = pwlEnd(f);
  const a = Math.max(lo, f.x0);
  const b = Math.min(hi, end);
  if (a > b + 1e-9) return null;
  const len: number[] = [];
  const slope: number[] = [];
  let x = f.x0;
  let v0 = f.v0;
  for (let i = 0; i < f.len.length; i++) {
    const l = f.len[i] as number;
    const s = f.slope[i] as number;
    const s0 = Math.max(x, a);
    const s1 = Math.min(x + l, b);
    if (x + l <= a) v0 += l * s;
    else if (x < a) v0 += (a - x) * s;
    if (s1 > s0) {
      len.push(s1 - s0);
      slope.push(s);
    }
    x += l;
  }
  return { x0: a, v0, len, slope };
}

/** h(E) = f(a·E − k), a > 0. */
export function affine(f: Pwl, a: number, k: number): Pwl {
  return { x0: (f.x0 + k) / a, v0: f.v0, len: f.len.map((l) => l / a), slope: f.slope.map((s) => s * a) };
}

/** g(z) = f(−z). */
export function reflect(f: Pwl): Pwl {
  const end = pwlEnd(f);
  return { x0: -end, v0: evalPwl(f, end), len: f.len.slice().reverse(), slope: f.slope.map((s) => -s).reverse() };
}

/** Infimal convolution (f □ g)(x) = min_y f(y) + g(x − y): slopes merged in order. */
export function infConv(f: Pwl, g: Pwl): Pwl {
  const len: number[] = [];
  const slope: number[] = [];
  let i = 0;
  let j = 0;
  while (i < f.len.length || j < g.len.length) {
    if (j >= g.len.length || (i < f.len.length && (f.slope[i] as number) <= (g.slope[j] as number))) {
      len.push(f.len[i] as number);
      slope.push(f.slope[i] as number);
      i++;
    } else {
      len.push(g.len[j] as number);
      slope.push(g.slope[j] as number);
      j++;
    }
  }
  const n = normalise(len, slope);
  return { x0: f.x0 + g.x0, v0: f.v0 + g.v0, len: n.len, slope: n.slope };
}

/** Smallest minimiser of f. */
export function argminPwl(f: Pwl): number {
  let x = f.x0;
  for (let i = 0; i < f.len.length; i++) {
    if ((f.slope[i] as number) >= -EPS) return x;
    x += f.len[i] as number;
  }
  return x;
}

/**
 * Smallest q in [cost.x0, end(cost)] minimising cost(q) + u(base + q), with u's domain clipped:
 * q is kept where u is finite when possible. Both functions convex.
 */
export function argminShifted(cost: Pwl, u: Pwl, base: number): number {
  const uEnd = pwlEnd(u);
  const qLo = Math.max(cost.x0, u.x0 - base);
  const qHi = Math.min(pwlEnd(cost), uEnd - base);
  if (qLo > qHi) {
    // No q keeps the state inside u's domain: take the nearest end.
    return base + pwlEnd(cost) < u.x0 ? pwlEnd(cost) : cost.x0;
  }
  // Right-derivative walk over the merged breakpoints from qLo.
  let ci = 0;
  let cx = cost.x0;
  while (ci < cost.len.length && cx + (cost.len[ci] as number) <= qLo + 1e-13) cx += cost.len[ci++] as number;
  let ui = 0;
  let ux = u.x0 - base;
  while (ui < u.len.length && ux + (u.len[ui] as number) <= qLo + 1e-13) ux += u.len[ui++] as number;
  let q = qLo;
  while (q < qHi - 1e-13) {
    const cs = ci < cost.slope.length ? (cost.slope[ci] as number) : Infinity;
    const us = ui < u.slope.length ? (u.slope[ui] as number) : Infinity;
    if (cs + us >= -EPS) return q;
    const cNext = ci < cost.len.length ? cx + (cost.len[ci] as number) : Infinity;
    const uNext = ui < u.len.length ? ux + (u.len[ui] as number) : Infinity;
    const next = Math.min(cNext, uNext, qHi);
    q = next;
    if (cNext <= next + 1e-13 && ci < cost.len.length) {
      cx = cNext;
      ci++;
    }
    if (uNext <= next + 1e-13 && ui < u.len.length) {
      ux = uNext;
      ui++;
    }
  }
  return qHi;
}

/** Builds the convex cost of a slot from (length, slope) pieces starting at q = qLo. */
export function costPieces(qLo: number, v0: number, pieces: ReadonlyArray<readonly [number, number]>): Pwl {
  const sorted = pieces.filter((p) => p[0] > 1e-13).slice().sort((a, b) => a[1] - b[1]);
  const n = normalise(sorted.map((p) => p[0]), sorted.map((p) => p[1]));
  return { x0: qLo, v0, len: n.len, slope: n.slope };
}
