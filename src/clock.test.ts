import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { ManualClock, systemClock } from './clock.js';

describe('ManualClock', () => {
  it('wakes sleepers in time order as time advances', async () => {
    const clock = new ManualClock(1000);
    const woke: string[] = [];
    void clock.sleep(300).then(() => woke.push(`b@${clock.nowMs()}`));
    void clock.sleep(100).then(() => woke.push(`a@${clock.nowMs()}`));
    await clock.advance(200);
    expect(woke).toEqual(['a@1100']);
    await clock.advance(200);
    expect(woke).toEqual(['a@1100', 'b@1300']);
    expect(clock.nowMs()).toBe(1400);
  });

  it('leaves no abort listener behind on a shared signal once sleeps have woken', async () => {
    const clock = new ManualClock(0);
    const controller = new AbortController();
    for (let i = 0; i < 20; i++) {
      const slept = clock.sleep(10, controller.signal);
      await clock.advance(10);
      await slept;
    }
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('rejects a pending sleep when its signal aborts and never wakes it later', async () => {
    const clock = new ManualClock(0);
    const controller = new AbortController();
    const slept = clock.sleep(1000, controller.signal);
    controller.abort(new Error('stop'));
    await expect(slept).rejects.toThrow('stop');
    await clock.advance(2000);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });
});

describe('systemClock', () => {
  it('removes its abort listener after a sleep completes', async () => {
    const controller = new AbortController();
    await systemClock.sleep(1, controller.signal);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });
});
