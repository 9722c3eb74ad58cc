import { describe, expect, it } from 'vitest';
import { defaultConfig } from '../config/load.js';
import { openStore } from '../store/open-store.js';
import { BASELINE_KEY, flexibleDevices, storedPlans, type StoredPlanCache } from './stored-plans.js';

const T0 = Date.UTC(2026, 0, 14, 9);
const H = 3_600_000;
const config = defaultConfig({
  mqtt: { url: 'mqtt://127.0.0.1' },
  devices: [
    { id: 'car', kind: 'evCharger', charger: { type: 'goe', topicPrefix: 'go-eCharger/a' }, model: { capacityKwh: 60 } },
    { id: 't1', kind: 'hotWaterTank', switch: { type: 'shelly', topicPrefix: 'shelly/t1' }, model: { volumeL: 200, elementKw: 2 } },
    { id: 't2', kind: 'hotWaterTank', switch: { type: 'shelly', topicPrefix: 'shelly/t2' }, model: { volumeL: 200, elementKw: 2 } },
    { id: 'car2', kind: 'evCharger', charger: { type: 'goe', topicPrefix: 'go-eCharger/b' }, model: { capacityKwh: 40 } },
  ],
});

describe('the stored plans as history and bill read them', () => {
  it("reads each device's energy by its id, and a plan of an older version as the first device of each kind", () => {
    const store = openStore({ path: ':memory:' });
    const slot = { startMs: T0, endMs: T0 + H };
    store.savePlan({
      createdAtMs: T0 - H,
      horizonStartMs: T0,
      horizonEndMs: T0 + H,
      json: { createdMs: T0 - H, slots: [{ ...slot, tank: { energyKwh: 1 }, ev: { energyKwh: 7 }, baselineKwh: 9 }] },
    });
    store.savePlan({
      createdAtMs: T0,
      horizonStartMs: T0,
      horizonEndMs: T0 + H,
      json: {
        createdMs: T0,
        slots: [{ ...slot, tanks: { t1: { energyKwh: 2 }, t2: { energyKwh: 3 } }, evs: { car2: { energyKwh: 11 } }, baselineKwh: 20 }],
      },
    });
    store.savePlan({
      createdAtMs: T0 + 1,
      horizonStartMs: T0,
      horizonEndMs: T0 + H,
      json: { createdMs: T0 + 1, slots: [{ ...slot, tanks: { t1: { energyKwh: 'hot' } } }] },
    });
    const { plans, unreadable } = storedPlans(store, config.devices, T0, T0 + H);
    expect(unreadable).toBe(1);
    expect(plans.map((p) => p.slots[0]!.energyKwh)).toEqual([
      { t1: 1, t2: 0, car: 7, car2: 0, [BASELINE_KEY]: 9 },
      { t1: 2, t2: 3, car: 0, car2: 11, [BASELINE_KEY]: 20 },
    ]);
    expect(flexibleDevices(config.devices)).toEqual(['car', 't1', 't2', 'car2']);
  });

  it('reads each stored plan once with a cache, and keeps only the plans of the range last asked', () => {
    const store = openStore({ path: ':memory:' });
    const plan = (createdMs: number, kwh: unknown) => ({
      createdAtMs: createdMs,
      horizonStartMs: createdMs,
      horizonEndMs: createdMs + 2 * H,
      json: { createdMs, slots: [{ startMs: createdMs, endMs: createdMs + 2 * H, tanks: { t1: { energyKwh: kwh } } }] },
    });
    store.savePlan(plan(T0, 1));
    store.savePlan(plan(T0 + H, 'hot'));
    const fetched: number[][] = [];
    const counting = { planIdsBetween: store.planIdsBetween, plansById: (ids: readonly number[]) => (fetched.push([...ids]), store.plansById(ids)) };
    const cache: StoredPlanCache = new Map();

    const first = storedPlans(counting, config.devices, T0 + H, T0 + 2 * H, cache);
    expect(first.plans.map((p) => p.slots[0]!.energyKwh['t1'])).toEqual([1]);
    expect(first.unreadable).toBe(1);
    store.savePlan(plan(T0 + 2 * H, 4));
    const second = storedPlans(counting, config.devices, T0 + H, T0 + 3 * H, cache);
    expect(second.plans.map((p) => p.slots[0]!.energyKwh['t1'])).toEqual([1, 4]);
    expect(second.unreadable).toBe(1);
    // The first call read both plans; the second only the new one, the unreadable one not again.
    expect(fetched.map((ids) => ids.length)).toEqual([2, 1]);
    // A later range: the first plan has left it, and the cache.
    storedPlans(counting, config.devices, T0 + 2 * H, T0 + 3 * H, cache);
    expect([...cache.keys()]).toHaveLength(2);
    expect(fetched.at(-1)).toEqual([]);
  });
});
