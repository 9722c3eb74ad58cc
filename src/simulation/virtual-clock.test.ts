import { connect, type Socket } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { connectLoopback, echo, exchange, loopbackServer } from '../../test/helpers/loopback.js';
import { watchQuiescence, type Quiescence } from './quiescence.js';
import { VirtualClock } from './virtual-clock.js';

const startMs = Date.UTC(2025, 0, 6);

let quiescence: Quiescence;
let clock: VirtualClock;
beforeEach(() => {
  quiescence = watchQuiescence();
  clock = new VirtualClock(startMs, quiescence);
});
afterEach(() => quiescence.close());

/** Sleeps `ms` on the clock, then notes `name` and the clock's time (ms since the start). */
const sleeper = (woke: string[], name: string, ms: number): Promise<void> =>
  clock.sleep(ms).then(() => {
    woke.push(`${name}@${clock.nowMs() - startMs}`);
  });

/** Serves each connection by writing back what it reads after `turns` turns of the event loop. */
const echoAfterTurns =
  (turns: number) =>
  (socket: Socket): void => {
    socket.on('data', (chunk: Buffer) => {
      let left = turns;
      const step = (): void => {
        if (left-- > 0) setImmediate(step);
        else socket.write(chunk);
      };
      step();
    });
  };

/**
 * A port whose connections pass through `relays` loopback relays to an echo server: bytes cross
 * one hop per turn of the event loop, and some are in flight on a hop at every moment.
 */
async function relayedEcho(relays: number): Promise<number> {
  let { port } = await loopbackServer(echo);
  for (let i = 0; i < relays; i++) {
    const next = port;
    ({ port } = await loopbackServer((socket) => {
      const onward = connect({ host: '127.0.0.1', port: next });
      onward.on('error', () => undefined);
      socket.once('close', () => onward.destroy());
      socket.pipe(onward).pipe(socket);
    }));
  }
  return port;
}

/** After `ms` on the clock, sends a request on `socket` under a timeout of 5 ms on the clock: which came first, and when. */
async function requestUnderTimeout(socket: Socket, ms: number): Promise<string> {
  await clock.sleep(ms);
  const timeout = new AbortController();
  const outcome = await Promise.race([
    exchange(socket, 'ping').then((b) => `answer ${b.toString()} at ${clock.nowMs() - startMs}`),
    clock.sleep(5, timeout.signal).then(() => `timeout at ${clock.nowMs() - startMs}`),
  ]);
  timeout.abort();
  return outcome;
}

describe('VirtualClock', () => {
  it('wakes sleepers by due time, and those due at one instant in the order they went to sleep', async () => {
    const woke: string[] = [];
    void sleeper(woke, 'c', 30);
    void sleeper(woke, 'a', 10);
    void sleeper(woke, 'x', 20);
    void sleeper(woke, 'y', 20);
    void sleeper(woke, 'z', 20);
    await clock.runFor(100);
    expect(woke).toEqual(['a@10', 'x@20', 'y@20', 'z@20', 'c@30']);
  });

  it('wakes one sleeper at a time: the second one due at an instant sees the first one’s round trip through loopback relays done', async () => {
    const socket = await connectLoopback(await relayedEcho(6));
    const events: string[] = [];
    const actor = async (name: string): Promise<void> => {
      await clock.sleep(1000);
      events.push(`${name} woke`);
      const answer = await exchange(socket, name);
      events.push(`${name} heard ${answer.toString()}`);
    };
    const both = Promise.all([actor('first'), actor('second')]);
    await clock.runFor(1000);
    await both;
    expect(events).toEqual(['first woke', 'first heard first', 'second woke', 'second heard second']);
  });

  it('does not move time while a server takes many turns of the event loop to answer', async () => {
    // Its next step waits as an immediate, which counts as work.
    const { port } = await loopbackServer(echoAfterTurns(20));
    const socket = await connectLoopback(port);
    const outcome = requestUnderTimeout(socket, 10);
    await clock.runFor(100);
    expect(await outcome).toBe('answer ping at 10');
  });

  it('does not move time while bytes are in flight: an answer through a chain of loopback relays beats a timeout', async () => {
    const socket = await connectLoopback(await relayedEcho(6));
    const outcome = requestUnderTimeout(socket, 10);
    await clock.runFor(100);
    expect(await outcome).toBe('answer ping at 10');
  });

  it('rejects an aborted sleep with the signal’s reason and never wakes it', async () => {
    const woke: string[] = [];
    const controller = new AbortController();
    const aborted = clock.sleep(10, controller.signal).then(() => woke.push('aborted one'));
    void sleeper(woke, 'kept', 20);
    controller.abort(new Error('stop'));
    await expect(aborted).rejects.toThrow('stop');
    expect(clock.pending()).toBe(1);
    expect(clock.nextDueMs()).toBe(startMs + 20);
    await clock.runFor(100);
    expect(woke).toEqual(['kept@20']);
    expect(clock.pending()).toBe(0);
  });

  it('rejects a sleep on a signal that is already aborted', async () => {
    const controller = new AbortController();
    controller.abort(new Error('already'));
    await expect(clock.sleep(10, controller.signal)).rejects.toThrow('already');
    expect(clock.pending()).toBe(0);
  });

  it('ends a run at its end instant, settled, with the sleepers due later still waiting', async () => {
    const woke: string[] = [];
    void sleeper(woke, 'early', 50);
    void sleeper(woke, 'late', 200);
    await clock.runUntil(startMs + 100);
    expect(clock.nowMs()).toBe(startMs + 100);
    expect(woke).toEqual(['early@50']);
    expect(clock.pending()).toBe(1);
    expect(clock.nextDueMs()).toBe(startMs + 200);
    await clock.runFor(100);
    expect(woke).toEqual(['early@50', 'late@200']);
  });

  it('moves time to the end instant when no one sleeps, and never backwards', async () => {
    await clock.runFor(60_000);
    expect(clock.nowMs()).toBe(startMs + 60_000);
    await clock.runUntil(startMs);
    expect(clock.nowMs()).toBe(startMs + 60_000);
  });

  it('stops a run early once `until` says so, at the instant of the wake that made it true', async () => {
    const woke: string[] = [];
    for (const ms of [10, 20, 30]) void sleeper(woke, `s${ms}`, ms);
    await clock.runFor(100, { until: () => woke.length === 2 });
    expect(woke).toEqual(['s10@10', 's20@20']);
    expect(clock.nowMs()).toBe(startMs + 20);
    expect(clock.pending()).toBe(1);
  });

  it('tells `afterInstant` each instant that had wakes, once they settled, and no other', async () => {
    void clock.sleep(10);
    void clock.sleep(20);
    void clock.sleep(20);
    const seen: number[] = [];
    await clock.runFor(100, { afterInstant: (n) => seen.push(n - startMs) });
    expect(seen).toEqual([10, 20]);
  });

  it('ends a run with the error `afterInstant` throws', async () => {
    void clock.sleep(10);
    const seen: number[] = [];
    const run = clock.runFor(100, {
      afterInstant: (nowMs) => {
        seen.push(nowMs - startMs);
        if (nowMs - startMs >= 10) throw new Error('invariant broken');
      },
    });
    await expect(run).rejects.toThrow('invariant broken');
    expect(seen.at(-1)).toBeGreaterThanOrEqual(10);
  });

  it('refuses a second run while one is running', async () => {
    const first = clock.runFor(10);
    await expect(clock.runFor(10)).rejects.toThrow('already running');
    await first;
  });

  it('steps time without waking a sleeper due in the step', async () => {
    const woke: string[] = [];
    void sleeper(woke, 's', 10);
    clock.step(60_000);
    expect(clock.nowMs()).toBe(startMs + 60_000);
    await clock.settle();
    expect(woke).toEqual([]);
    expect(clock.pending()).toBe(1);
    await clock.runFor(0);
    expect(woke).toEqual(['s@60000']);
  });

  it('throws on a loop of zero-length sleeps instead of spinning at one instant', async () => {
    let stop = false;
    const spin = async (): Promise<void> => {
      while (!stop) await clock.sleep(0);
    };
    void spin();
    await expect(clock.runFor(1000)).rejects.toThrow(/zero-length sleeps/);
    stop = true;
    expect(clock.nowMs()).toBe(startMs);
  });
});
