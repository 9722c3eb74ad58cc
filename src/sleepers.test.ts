import { describe, expect, it } from 'vitest';
import { SleeperQueue } from './sleepers.js';

/** Takes every sleeper due by `untilMs`, waking each, and lists their wake times in the order taken. */
async function drain(q: SleeperQueue, untilMs: number): Promise<number[]> {
  const taken: number[] = [];
  for (let s = q.take(untilMs); s; s = q.take(untilMs)) {
    taken.push(s.wakeMs);
    s.wake();
  }
  await Promise.resolve();
  return taken;
}

describe('SleeperQueue', () => {
  it('hands sleepers out in time order, those due together in the order they went to sleep, none past the limit', async () => {
    const q = new SleeperQueue();
    const woke: string[] = [];
    const sleep = (name: string, atMs: number): void => void q.sleepUntil(atMs).then(() => woke.push(name));
    sleep('c', 30);
    sleep('a1', 10);
    sleep('b', 20);
    sleep('a2', 10);
    expect(q.size).toBe(4);
    expect(q.nextDueMs()).toBe(10);
    expect(await drain(q, 20)).toEqual([10, 10, 20]);
    await new Promise((r) => setImmediate(r));
    expect(woke).toEqual(['a1', 'a2', 'b']);
    expect(q.size).toBe(1);
    expect(q.take(29)).toBeUndefined();
  });

  it('drops an aborted sleeper at once, rejecting with its reason, and refuses a sleep on a signal already aborted', async () => {
    const q = new SleeperQueue();
    const stop = new AbortController();
    const sleeping = q.sleepUntil(10, stop.signal);
    stop.abort(new Error('stopped'));
    await expect(sleeping).rejects.toThrow('stopped');
    expect(q.size).toBe(0);
    expect(q.nextDueMs()).toBeUndefined();
    await expect(q.sleepUntil(5, stop.signal)).rejects.toThrow('stopped');
    expect(q.size).toBe(0);
  });

  it('leaves no listener on a long-lived signal once its sleepers woke', async () => {
    const q = new SleeperQueue();
    const shared = new AbortController();
    let listeners = 0;
    const add = shared.signal.addEventListener.bind(shared.signal);
    const remove = shared.signal.removeEventListener.bind(shared.signal);
    shared.signal.addEventListener = ((...args: Parameters<typeof add>) => {
      listeners++;
      add(...args);
    }) as typeof add;
    shared.signal.removeEventListener = ((...args: Parameters<typeof remove>) => {
      listeners--;
      remove(...args);
    }) as typeof remove;
    const sleeps = Array.from({ length: 5 }, (_, i) => q.sleepUntil(i, shared.signal));
    expect(listeners).toBe(5);
    await drain(q, 10);
    await Promise.all(sleeps);
    expect(listeners).toBe(0);
  });
});
