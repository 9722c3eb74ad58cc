import { describe, expect, it } from 'vitest';
import { ManualClock } from '../clock.js';
import { WattshiftError } from '../errors.js';
import { createLogger } from '../log.js';
import { startHeartbeats } from './heartbeats.js';

const t0 = Date.UTC(2025, 0, 6);
const settle = () => new Promise((r) => setTimeout(r, 5));

describe('startHeartbeats', () => {
  it('feeds each watchdog at its own pace, retries a failed feed at the next tick and logs it once, and stops feeding when stopped', async () => {
    const clock = new ManualClock(t0);
    const lines: Record<string, unknown>[] = [];
    const logger = createLogger({ level: 'debug', destination: { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) } });
    const beats: Record<string, number[]> = { a: [], b: [] };
    let bFails = false;
    const handle = startHeartbeats(
      [
        { device: 'a', heartbeat: { everyMs: 10_000, beat: async () => void beats.a!.push(clock.nowMs() - t0) } },
        {
          device: 'b',
          heartbeat: {
            everyMs: 30_000,
            beat: async () => {
              if (bFails) throw new WattshiftError('DEVICE_TIMEOUT', 'no answer');
              beats.b!.push(clock.nowMs() - t0);
            },
          },
        },
      ],
      { clock, logger },
    )!;
    for (let i = 0; i < 6; i++) {
      await settle();
      await clock.advance(10_000);
    }
    await settle();
    expect(beats.a).toEqual([0, 10_000, 20_000, 30_000, 40_000, 50_000, 60_000]);
    expect(beats.b).toEqual([0, 30_000, 60_000]);

    bFails = true;
    for (let i = 0; i < 4; i++) {
      await clock.advance(10_000);
      await settle();
    }
    const failures = lines.filter((l) => l.code === 'DEVICE_TIMEOUT' && l.level !== 'debug');
    expect(failures).toHaveLength(1);
    // An outage is logged as its message, without a stack.
    expect(failures[0]!.err).toEqual(expect.stringContaining('watchdog not fed: b'));
    bFails = false;
    await clock.advance(10_000);
    await settle();
    expect(beats.b!.at(-1)).toBe(110_000); // retried every tick until it went through
    expect(beats.a!.at(-1)).toBe(110_000);

    await handle.stop();
    const count = beats.a!.length;
    await clock.advance(60_000);
    await settle();
    expect(beats.a).toHaveLength(count);
  });

  it('starts nothing without watchdogs', () => {
    expect(startHeartbeats([], { clock: new ManualClock(t0), logger: createLogger({ level: 'silent' }) })).toBeNull();
  });
});
