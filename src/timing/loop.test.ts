import { describe, expect, it } from 'vitest';
import { ManualClock } from '../clock.js';
import { createLogger } from '../log.js';
import { WattshiftError } from '../errors.js';
import { startLoop } from './loop.js';

const settle = async (n = 5): Promise<void> => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

function capture() {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({ level: 'debug', destination: { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) } });
  return { lines, logger };
}

/** A loop on a manual clock whose tick number `n` (from 1) throws `failure(n)` if that is an error. */
function failingLoop(name: string, errorDelayMs: number, failure: (n: number) => Error | undefined) {
  const clock = new ManualClock(0);
  const { lines, logger } = capture();
  const count = { ticks: 0 };
  const tick = async (): Promise<number> => {
    const err = failure(++count.ticks);
    if (err) throw err;
    return 1000;
  };
  return { clock, lines, count, loop: startLoop({ name, clock, logger, errorDelayMs, tick }) };
}

describe('startLoop', () => {
  it('ticks, sleeps the returned delay on the clock, and never overlaps', async () => {
    const clock = new ManualClock(0);
    let running = 0;
    let maxRunning = 0;
    const starts: number[] = [];
    let release: (() => void) | null = null;
    const loop = startLoop({
      name: 't',
      clock,
      logger: capture().logger,
      errorDelayMs: 10,
      tick: async () => {
        running++;
        maxRunning = Math.max(maxRunning, running);
        starts.push(clock.nowMs());
        if (starts.length === 2) await new Promise<void>((r) => (release = r));
        running--;
        return 1000;
      },
    });
    await settle();
    expect(starts).toEqual([0]);
    await clock.advance(999);
    expect(starts).toEqual([0]);
    await clock.advance(1);
    expect(starts).toEqual([0, 1000]);
    // The second tick hangs: wakes and time passing start nothing new.
    loop.wake();
    loop.wake();
    await clock.advance(5000);
    await settle();
    expect(starts).toEqual([0, 1000]);
    (release as unknown as () => void)();
    await settle();
    // Woken during the tick: the next one runs at once.
    expect(starts).toEqual([0, 1000, 6000]);
    expect(maxRunning).toBe(1);
    await loop.stop();
  });

  it('wake() cuts the sleep short', async () => {
    const clock = new ManualClock(0);
    let ticks = 0;
    const loop = startLoop({ name: 't', clock, logger: capture().logger, errorDelayMs: 10, tick: async () => (ticks++, 3_600_000) });
    await settle();
    expect(ticks).toBe(1);
    loop.wake();
    await settle();
    expect(ticks).toBe(2);
    expect(clock.nowMs()).toBe(0);
    await loop.stop();
  });

  it('logs a throwing tick with its code and carries on after errorDelayMs', async () => {
    const { clock, lines, count, loop } = failingLoop('flaky', 50, (n) =>
      n === 1 ? new WattshiftError('API_UNAVAILABLE', 'down') : n === 2 ? new Error('plain') : undefined,
    );
    await settle();
    expect(count.ticks).toBe(1);
    await clock.advance(49);
    expect(count.ticks).toBe(1);
    await clock.advance(1);
    expect(count.ticks).toBe(2);
    await clock.advance(50);
    expect(count.ticks).toBe(3);
    // A retryable failure warns, a bug is an error, and the recovery is logged once.
    const logged = lines.filter((l) => l.loop === 'flaky').map((l) => [l.level, l.code ?? l.downSinceCode, l.msg]);
    expect(logged).toEqual([
      ['warn', 'API_UNAVAILABLE', 'flaky tick failed'],
      ['error', 'INTERNAL', 'flaky tick failed'],
      ['info', 'INTERNAL', 'flaky recovered'],
    ]);
    await loop.stop();
  });

  it('logs an outage as its message and cause, without a stack; a bug with its stack', async () => {
    const dns = Object.assign(new Error('getaddrinfo ENOTFOUND api.example'), { code: 'ENOTFOUND' });
    const { lines, loop } = failingLoop('dns', 10, (n) =>
      n === 1 ? new WattshiftError('API_UNAVAILABLE', 'GET /events failed', { cause: dns }) : n === 2 ? new TypeError('x is undefined') : undefined,
    );
    await settle();
    await loop.stop();
    const [outage] = lines.filter((l) => l.code === 'API_UNAVAILABLE');
    expect(outage?.err).toBe('GET /events failed (getaddrinfo ENOTFOUND api.example)');
    const { clock, lines: more, loop: again } = failingLoop('bug', 10, (n) => (n === 1 ? new TypeError('x is undefined') : undefined));
    await settle();
    await clock.advance(10);
    await again.stop();
    expect((more.find((l) => l.code === 'INTERNAL')?.err as { stack?: string } | undefined)?.stack).toMatch(/TypeError: x is undefined\n\s+at /);
  });

  it('logs a repeated failure once, not on every retry', async () => {
    const { clock, lines, count, loop } = failingLoop('outage', 10, (n) => (n <= 5 ? new WattshiftError('API_UNAVAILABLE', 'down') : undefined));
    await settle();
    for (let i = 0; i < 6; i++) await clock.advance(10);
    expect(count.ticks).toBeGreaterThanOrEqual(6);
    const shown = lines.filter((l) => l.loop === 'outage' && l.level !== 'debug').map((l) => l.msg);
    expect(shown).toEqual(['outage tick failed', 'outage recovered']);
    await loop.stop();
  });

  it('stop() waits for the running tick and ends the loop; the tick sees the abort', async () => {
    const clock = new ManualClock(0);
    let finished = false;
    let sawAbort = false;
    let ticks = 0;
    const loop = startLoop({
      name: 't',
      clock,
      logger: capture().logger,
      errorDelayMs: 10,
      tick: async (signal) => {
        ticks++;
        await new Promise<void>((r) => setTimeout(r, 30));
        sawAbort = signal.aborted;
        finished = true;
        return 10;
      },
    });
    await settle();
    const stopped = loop.stop();
    let resolved = false;
    void stopped.then(() => (resolved = true));
    await settle();
    expect(resolved).toBe(false);
    await stopped;
    expect(finished).toBe(true);
    expect(sawAbort).toBe(true);
    await clock.advance(1000);
    await settle();
    expect(ticks).toBe(1);
  });

  it('stop() during the sleep resolves at once and a throw after stop is not logged', async () => {
    const clock = new ManualClock(0);
    const { lines, logger } = capture();
    let ticks = 0;
    const loop = startLoop({ name: 't', clock, logger, errorDelayMs: 10, tick: async () => (ticks++, 60_000) });
    await settle();
    await loop.stop();
    expect(ticks).toBe(1);
    const loop2 = startLoop({
      name: 'u',
      clock,
      logger,
      errorDelayMs: 10,
      tick: (signal) => new Promise<number>((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted')))),
    });
    await settle();
    await loop2.stop();
    expect(lines.filter((l) => l.level === 'error')).toEqual([]);
  });
});
