import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../clock.js';
import { silentLogger } from '../log.js';
import { openStore } from '../store/open-store.js';
import type { Plan } from '../core/types.js';
import { tempDir } from '../../test/helpers/temp-dir.js';
import { startPlanning } from './planning.js';

const start = Date.UTC(2026, 2, 2, 17, 5);

/** A plan that names when it was made: enough for the store, which keeps plans as JSON. */
function planAt(nowMs: number): Plan {
  return { createdMs: nowMs, startMs: nowMs, endMs: nowMs + 48 * 3_600_000, slots: [], shortfalls: [], mode: 'optimal' } as unknown as Plan;
}

async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
}

/** Planning on a real SQLite store and a manual clock, with a plan that names when it was made. */
async function planningOnDisk() {
  const store = openStore({ path: join(tempDir('wattshift-planning-'), 'db.sqlite') });
  const clock = new ManualClock(start);
  const planning = startPlanning({
    buildInput: () => ({}) as never,
    plan: (_input, nowMs) => planAt(nowMs),
    store,
    clock,
    logger: silentLogger(),
    slotMinutes: 60,
    onPlan: () => undefined,
  });
  await settle();
  return { store, clock, planning };
}

describe('planning', () => {
  it('stores the plan in force on a clean stop, though the last store was moments ago', async () => {
    const { store, clock, planning } = await planningOnDisk();
    expect((store.latestPlan()?.json as Plan).createdMs).toBe(start);

    // Ten minutes on, a re-plan: too soon to be stored by the 30-minute rule.
    await clock.advance(10 * 60_000);
    planning.request('a wish changed');
    await settle();
    expect(planning.current()?.createdMs).toBe(start + 10 * 60_000);
    expect((store.latestPlan()?.json as Plan).createdMs).toBe(start);

    await planning.stop();
    expect((store.latestPlan()?.json as Plan).createdMs).toBe(start + 10 * 60_000);
    store.close();
  });

  it('writes nothing more on a stop when the plan in force is the one stored', async () => {
    const { store, planning } = await planningOnDisk();
    const storedId = store.latestPlan()?.id;
    await planning.stop();
    expect(store.latestPlan()?.id).toBe(storedId);
    store.close();
  });
});
