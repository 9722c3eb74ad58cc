import { describe, expect, it } from 'vitest';
import { ManualClock } from '../clock.js';
import { SteppedClock } from './stepped-clock.js';

describe('SteppedClock', () => {
  it("reads the world's time plus its steps, either way, while its sleeps keep the world's pace", async () => {
    const world = new ManualClock(1_000_000);
    const gateway = new SteppedClock(world);
    gateway.step(-300_000);
    expect(gateway.nowMs()).toBe(700_000);
    let woke = false;
    const sleeping = gateway.sleep(60_000).then(() => {
      woke = true;
    });
    // A step forward moves what the clock says, not when a sleep ends.
    gateway.step(600_000);
    expect(gateway.nowMs()).toBe(1_300_000);
    await world.advance(59_999);
    expect(woke).toBe(false);
    await world.advance(1);
    await sleeping;
    expect(woke).toBe(true);
    expect(gateway.nowMs()).toBe(world.nowMs() + 300_000);
  });
});
