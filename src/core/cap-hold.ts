/**
 * Caps that outlive the daemon, pure parts: how long a cap binds a device from now (so the device
 * can be asked to hold its block that long by itself), and the rule for acknowledging or
 * declining each target of an LPC event (docs/caps.md).
 */

/** One point of an LPC cap: `maxKw` from `startMs` for `durationMs`; `resourceId` null for the location. */
export interface CapPoint {
  startMs: number;
  durationMs: number;
  maxKw: number;
  resourceId: string | null;
}

/**
 * The end of the cap run binding a device now, ms: from the points active at `nowMs`, every point
 * that `applies`, starts no later than the run's end so far and still asks for a block (below the
 * device's `ratedKw`, or no looser than the loosest active one) extends it. A 3-hour cap sent as
 * three hourly points is one window; a looser cap after it, such as a location cap the heater fits
 * under, is not. Undefined when no point that applies is active now.
 */
export function capRunEndMs(points: readonly CapPoint[], nowMs: number, applies: (p: CapPoint) => boolean, ratedKw = 0): number | undefined {
  const mine = points.filter(applies).sort((a, b) => a.startMs - b.startMs);
  const active = mine.filter((p) => p.startMs <= nowMs && nowMs < p.startMs + p.durationMs);
  if (active.length === 0) return undefined;
  const loosestKw = Math.max(...active.map((p) => p.maxKw));
  let endMs = Math.max(...active.map((p) => p.startMs + p.durationMs));
  for (const p of mine) {
    if (p.startMs > nowMs && p.startMs <= endMs && (p.maxKw <= loosestKw || p.maxKw < ratedKw)) endMs = Math.max(endMs, p.startMs + p.durationMs);
  }
  return endMs;
}

/** How a device stands toward a cap when wattshift is gone (a crash, a hang, a power cut of the Pi). */
export interface DeviceHold {
  /** Whether the device answers now (a device that is down cannot be given the cap). */
  up: boolean;
  /** Most it can draw, kW (element, pump, charger at full current). */
  ratedKw: number;
  /** Longest block the device holds by itself once written, ms (0: only while wattshift runs). */
  holdsByItselfMs: number;
  /** What it draws at most without wattshift, kW: its rated power unless it falls to a limit of its own (a charger's safe current). */
  unheldKw: number;
}

/**
 * Whether a resource cap can be promised: the device is up and, for every point below its rated
 * power, it can hold the block by itself to the end of that point's window (written at the
 * window's start), so a dead daemon does not end it. A cap at or above what the device can draw
 * asks nothing of it.
 */
export function canHoldResourceCap(device: DeviceHold | undefined, points: readonly CapPoint[]): boolean {
  if (!device || !device.up) return false;
  return points.every((p) => p.maxKw >= device.ratedKw || windowMs(points, p, device.ratedKw) <= device.holdsByItselfMs);
}

/**
 * Whether a location cap can be promised: for every point, the uncontrolled house load (from the
 * main meter) plus what each controllable device draws when it does not hold a block by itself to
 * the window's end stays within the cap. A device that is down counts at what it draws without
 * wattshift too: it may be unable to take the block.
 */
export function canHoldLocationCap(baseLoadKw: number, devices: readonly DeviceHold[], points: readonly CapPoint[]): boolean {
  return points.every((p) => {
    const unheldKw = devices.reduce((sum, d) => sum + (d.up && windowMs(points, p, d.ratedKw) <= d.holdsByItselfMs ? 0 : d.unheldKw), 0);
    return baseLoadKw + unheldKw <= p.maxKw + 1e-9;
  });
}

/** Length of the run of `points` that contains `p` (consecutive points form one window), for a device drawing `ratedKw`. */
function windowMs(points: readonly CapPoint[], p: CapPoint, ratedKw: number): number {
  const startMs = runStartMs(points, p);
  const endMs = capRunEndMs(points, p.startMs, (q) => q.resourceId === p.resourceId, ratedKw) ?? p.startMs + p.durationMs;
  return endMs - startMs;
}

function runStartMs(points: readonly CapPoint[], p: CapPoint): number {
  let startMs = p.startMs;
  for (;;) {
    const before = points.find((q) => q.resourceId === p.resourceId && q.startMs < startMs && q.startMs + q.durationMs >= startMs);
    if (!before) return startMs;
    startMs = before.startMs;
  }
}
