import { describe, expect, it } from 'vitest';
import { WattshiftError } from './errors.js';
import { assemble, assembleStoppingTogether, providing, type Part } from './lifecycle.js';
import { silentLogger } from './log.js';

/** A module that provides `value`, recording its start and stop in `calls`. */
function part<T>(name: string, value: T, calls: string[], failStart?: Error): Part<T> {
  return {
    name,
    start: async () => {
      calls.push(`start ${name}`);
      if (failStart) throw failStart;
      return value;
    },
    stop: async () => void calls.push(`stop ${name}`),
    health: () => [{ name, ok: true }],
  };
}

const deps = { logger: silentLogger() };

describe('assemble', () => {
  it('hands each module what those before it provide, and stops them in reverse, once', async () => {
    const calls: string[] = [];
    const app = assemble(async (use) => {
      const store = await use(part('store', { rows: 3 }, calls));
      const planner = await use(part('planner', `plans from ${store.rows} rows`, calls));
      return { planner };
    }, deps);
    expect(await app.start()).toEqual({ planner: 'plans from 3 rows' });
    expect(app.health().map((h) => h.name)).toEqual(['store', 'planner']);
    await app.stop();
    await app.stop();
    expect(calls).toEqual(['start store', 'start planner', 'stop planner', 'stop store']);
  });

  it('stops what started, the failed module too, when a start fails, and rethrows its error', async () => {
    const calls: string[] = [];
    const failure = new WattshiftError('CONFIG_INVALID', 'port taken');
    const app = assemble(async (use) => {
      await use(part('store', 1, calls));
      await use(part('status', 2, calls, failure));
      await use(part('never', 3, calls));
    }, deps);
    await expect(app.start()).rejects.toBe(failure);
    expect(calls).toEqual(['start store', 'start status', 'stop status', 'stop store']);
  });

  it('starts a group in order inside the assembly and stops its modules all at once', async () => {
    const calls: string[] = [];
    let releasePlanner: () => void = () => undefined;
    const slowPlanner: Part<string> = {
      name: 'planner',
      start: async () => 'planner',
      // Still stopping when the prices' stop begins: in reverse order the prices would wait for it.
      stop: () => new Promise<void>((resolve) => (releasePlanner = () => (calls.push('stop planner'), resolve()))),
    };
    const app = assemble(async (use) => {
      await use(part('store', 1, calls));
      return use(
        assembleStoppingTogether(
          'jobs',
          async (useJob) => {
            const prices = await useJob(part('prices', 'prices', calls));
            const planner = await useJob(slowPlanner);
            return `${planner} on ${prices}`;
          },
          deps,
        ),
      );
    }, deps);
    expect(await app.start()).toBe('planner on prices');
    const stopped = app.stop();
    await expect.poll(() => calls).toContain('stop prices');
    releasePlanner();
    await stopped;
    expect(calls.slice(-3)).toEqual(['stop prices', 'stop planner', 'stop store']);
  });
});

describe('providing', () => {
  it('stops what its start made and reads its health from what it gave', async () => {
    let stopped = false;
    const p = providing(
      'billing',
      () => ({ made: { stop: async () => void (stopped = true) }, provides: { ok: false } }),
      (bill) => [{ name: 'billing', ok: bill?.ok ?? true }],
    );
    expect(p.health?.()).toEqual([{ name: 'billing', ok: true }]);
    expect(await p.start()).toEqual({ ok: false });
    expect(p.health?.()).toEqual([{ name: 'billing', ok: false }]);
    await p.stop();
    expect(stopped).toBe(true);
  });
});
