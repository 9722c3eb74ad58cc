/**
 * Convex piecewise-linear functions on a closed interval, stored as a start point and segments
 * of non-decreasing slope. Outside the interval the function is +∞. This is all the exact
 * dynamic programme of the continuous tank needs: hinge (soft floor) terms, restricting the
 * domain, an affine change of variable, and infimal convolution (merge of slopes).
 */
export interface Pwl {
  x0: number;
  v0: number;
  len: ArrayLike<number>;
  slope: ArrayLike<number>;
}

const EPS = 1e-12;

export function pwlEnd(f: Pwl): number {
  let x = f.x0;
  for (let i = 0; i < f.len.length; i++) x += f.len[i] as number;
  return x;
}

function sameSlope(s0: number, s: number): boolean {
  return Math.abs(s0 - s) <= EPS * Math.max(1, Math.abs(s));
}

/**
 * Segments in typed arrays grown by doubling, reused from one backward step to the next so the
 * DP over a long horizon does not allocate a fresh function per slot.
 */
export class Segments {
  len = new Float64Array(256);
  slope = new Float64Array(256);
  size = 0;

  push(l: number, s: number): void {
    if (this.size === this.len.length) {
      const len = new Float64Array(2 * this.size);
      const slope = new Float64Array(2 * this.size);
      len.set(this.len);
      slope.set(this.slope);
      this.len = len;
      this.slope = slope;
    }
    this.len[this.size] = l;
    this.slope[this.size++] = s;
  }

  /** Slope of the last segment at or after `from`; NaN when there is none. */
  lastSlope(from: number): number {
    return this.size > from ? (this.slope[this.size - 1] as number) : NaN;
  }

  extendLast(l: number): void {
    this.len[this.size - 1] = (this.len[this.size - 1] as number) + l;
  }

  /** The function from `x0` over the segments [from, to). */
  view(x0: number, v0: number, from: number, to = this.size): Pwl {
    return { x0, v0, len: this.len.subarray(from, to), slope: this.slope.subarray(from, to) };
  }
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
    if (n > 0 && sameSlope(S[n - 1] as number, s)) L[n - 1] = (L[n - 1] as number) + l;
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

/**
 * Smallest q in [cost.x0, end(cost)] minimising cost(q) + u(base + q), with u's domain clipped:
 * q is kept where u is finite when possible. Both functions convex.
 */
export function argminShifted(cost: Pwl, u: Pwl, base: number): number {
  const uEnd = pwlEnd(u);
  const qHi = Math.min(pwlEnd(cost), uEnd - base);
  let qLo = Math.max(cost.x0, u.x0 - base);
  if (qLo > qHi + 1e-9) {
    // No q keeps the state inside u's domain: take the nearest end.
    return base + pwlEnd(cost) < u.x0 ? pwlEnd(cost) : cost.x0;
  }
  if (qLo > qHi) qLo = qHi; // rounding
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
  const sorted = pieces
    .filter((p) => p[0] > 1e-13)
    .slice()
    .sort((a, b) => a[1] - b[1]);
  const n = normalise(
    sorted.map((p) => p[0]),
    sorted.map((p) => p[1]),
  );
  return { x0: qLo, v0, len: n.len, slope: n.slope };
}

/**
 * One fused backward step of the storage DP, for speed:
 *   u = restrict(w + m·max(0, floor − x), lo, hi)            (appended to `uOut`, kept for recovery)
 *   next(E) = restrict((u □ reflect(cost))(a·E − k), lo, hi)  (written over `nextOut`)
 * The returned functions view those buffers; `w` must not live in `nextOut`.
 */
export function backwardStep(
  w: Pwl,
  floor: number,
  m: number,
  lo: number,
  hi: number,
  cost: Pwl,
  a: number,
  k: number,
  uOut = new Segments(),
  nextOut = new Segments(),
): { u: Pwl; next: Pwl } {
  // u: floor penalty + restriction in one pass (no closures: this is the hot loop).
  const uFrom = uOut.size;
  let x = w.x0;
  let v = w.v0 + (floor > w.x0 ? m * (floor - w.x0) : 0);
  let ux0 = NaN;
  let uv0 = NaN;
  const nw = w.len.length;
  for (let i = 0; i < nw; i++) {
    const l = w.len[i] as number;
    const s = w.slope[i] as number;
    // Up to two pieces: below and above the floor.
    const split = x < floor && x + l > floor;
    for (let part = 0; part < (split ? 2 : 1); part++) {
      const p1 = split && part === 1 ? floor : x;
      const p2 = split && part === 0 ? floor : x + l;
      const sp = p2 <= floor + 1e-15 && (split ? part === 0 : x + l <= floor) ? s - m : s;
      const a1 = p1 > lo ? p1 : lo;
      const a2 = p2 < hi ? p2 : hi;
      if (a2 > a1) {
        if (ux0 !== ux0) {
          ux0 = a1;
          uv0 = v + sp * (a1 - p1);
        }
        if (a2 - a1 > 1e-13) {
          if (sameSlope(uOut.lastSlope(uFrom), sp)) uOut.extendLast(a2 - a1);
          else uOut.push(a2 - a1, sp);
        }
      }
      v += (p2 - p1) * sp;
    }
    x += l;
  }
  if (ux0 !== ux0) {
    ux0 = Math.min(Math.max(w.x0, lo), hi);
    uv0 = evalPwl(w, ux0) + (floor > ux0 ? m * (floor - ux0) : 0);
  }
  const u = uOut.view(ux0, uv0, uFrom);
  // next: merge u with the reflected cost (slopes −s in reverse), then x → (x + k)/a, clip.
  const cEnd = pwlEnd(cost);
  const cv = evalPwl(cost, cEnd);
  const rl = cost.len.length;
  const nu = u.len.length;
  const nx0 = (u.x0 - cEnd + k) / a;
  nextOut.size = 0;
  let i = 0;
  let j = 0;
  let xx = nx0;
  let vv = u.v0 + cv;
  let sx0 = NaN;
  let sv0 = NaN;
  while (i < nu || j < rl) {
    let l: number;
    let s: number;
    const rs = j < rl ? -(cost.slope[rl - 1 - j] as number) : Infinity;
    if (i < nu && (u.slope[i] as number) <= rs) {
      l = (u.len[i] as number) / a;
      s = (u.slope[i] as number) * a;
      i++;
    } else {
      l = (cost.len[rl - 1 - j] as number) / a;
      s = rs * a;
      j++;
    }
    const a1 = Math.max(xx, lo);
    const a2 = Math.min(xx + l, hi);
    if (a2 > a1) {
      if (Number.isNaN(sx0)) {
        sx0 = a1;
        sv0 = vv + s * (a1 - xx);
      }
      if (sameSlope(nextOut.lastSlope(0), s)) nextOut.extendLast(a2 - a1);
      else if (a2 - a1 > 1e-13) nextOut.push(a2 - a1, s);
    }
    vv += l * s;
    xx += l;
  }
  if (Number.isNaN(sx0)) {
    // Empty after clipping: keep the nearest end point so the caller still has a function.
    sx0 = Math.min(Math.max(nx0, lo), hi);
    sv0 = sx0 <= nx0 ? u.v0 + cv : vv;
  }
  return { u, next: nextOut.view(sx0, sv0, 0) };
}
