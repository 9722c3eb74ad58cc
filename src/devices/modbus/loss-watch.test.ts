import { describe, expect, it } from 'vitest';
import { WattshiftError } from '../../errors.js';
import { LossWatch } from './loss-watch.js';

const lost = (): WattshiftError => new WattshiftError('DEVICE_UNREACHABLE', 'connection lost');

describe('LossWatch', () => {
  it('keeps nothing of requests that have settled', async () => {
    const watch = new LossWatch();
    for (let i = 0; i < 1000; i++) await watch.guard(Promise.resolve(i));
    await expect(watch.guard(Promise.reject(new Error('exception reply')))).rejects.toThrow('exception reply');
    expect(watch.watching).toBe(0);
  });

  it('fails every request in flight when the connection is lost, and later ones at once', async () => {
    const watch = new LossWatch();
    const never = new Promise<number>(() => undefined);
    const a = watch.guard(never);
    const b = watch.guard(never);
    expect(watch.watching).toBe(2);
    watch.fail(lost());
    await expect(a).rejects.toMatchObject({ code: 'DEVICE_UNREACHABLE' });
    await expect(b).rejects.toMatchObject({ code: 'DEVICE_UNREACHABLE' });
    await expect(watch.guard(Promise.resolve(1))).rejects.toMatchObject({ code: 'DEVICE_UNREACHABLE' });
    expect(watch.watching).toBe(0);
  });

  it('lets a request that answered before the loss keep its answer', async () => {
    const watch = new LossWatch();
    const answered = watch.guard(Promise.resolve('reply'));
    watch.fail(lost());
    await expect(answered).resolves.toBe('reply');
  });
});
