/**
 * A heated zone's comfort band per plan slot. A schedule's band starts at each of its occurrences
 * and holds until the next band starts ("from 06:00, 20..22.5 °C"); a preset other than comfort
 * holds one band all day. Pure: the occurrences are expanded by the caller.
 */

export interface ZoneBand {
  minC: number;
  maxC: number;
}

/** A band starting at `atMs` (an occurrence of a schedule entry). */
export interface BandStart extends ZoneBand {
  atMs: number;
}

/**
 * The band in effect at `atMs`: that of the latest start at or before it (of two at the same
 * instant, the one with the higher lower edge), `fallback` before the first start.
 */
export function zoneBandAt(starts: readonly BandStart[], atMs: number, fallback: ZoneBand): ZoneBand {
  let best: BandStart | undefined;
  for (const s of starts) {
    if (s.atMs > atMs) continue;
    if (!best || s.atMs > best.atMs || (s.atMs === best.atMs && s.minC > best.minC)) best = s;
  }
  return best ? { minC: best.minC, maxC: best.maxC } : { ...fallback };
}

/**
 * The band of each slot: the band in effect at its start, raised by any band that starts within it
 * (the highest lower and upper edges of them), so the room is already warm when a warmer band
 * starts mid-slot and a cooler one takes over only from the next slot.
 */
export function zoneBandsForSlots(
  starts: readonly BandStart[],
  slots: ReadonlyArray<{ startMs: number; endMs: number }>,
  fallback: ZoneBand,
): ZoneBand[] {
  return slots.map((slot) => {
    const band = zoneBandAt(starts, slot.startMs, fallback);
    for (const s of starts) {
      if (s.atMs <= slot.startMs || s.atMs >= slot.endMs) continue;
      band.minC = Math.max(band.minC, s.minC);
      band.maxC = Math.max(band.maxC, s.maxC);
    }
    return band;
  });
}
