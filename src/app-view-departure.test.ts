/** The car's departure in the views: a command's, else the one the plan charges for. */
import { describe, expect, it } from 'vitest';
import { homeView } from './app-view.js';
import { parseConfig } from './config/load.js';
import { plan as makePlan } from './core/planner.js';
import { buildPriceSeries } from './core/prices.js';
import { stateMessages } from './ha/state.js';
import { haTopics } from './ha/topics.js';

const hour = 3_600_000;
const now = Date.UTC(2026, 2, 2, 17, 30);
const planned = Date.UTC(2026, 2, 3, 6);

const { config } = parseConfig(
  {
    version: 1,
    site: { timezone: 'Europe/Oslo', priceArea: 'NO1', currency: 'NOK', locationLimitKw: 17 },
    spark: { clientId: 'c', clientSecret: 'x' },
    storage: { path: ':memory:' },
    mqtt: { url: 'mqtt://127.0.0.1:1883' },
    devices: [{ id: 'car', kind: 'evCharger', charger: { type: 'goe', topicPrefix: 'go-eCharger/1' }, model: { capacityKwh: 60 } }],
  },
  { env: {} },
);

function viewWith(commandMs: number | null) {
  const from = Date.UTC(2026, 2, 2, 17);
  const slots = buildPriceSeries({
    slotMinutes: 60,
    fromMs: from,
    toMs: from + 24 * hour,
    timezone: 'Europe/Oslo',
    currency: 'NOK',
    deltas: [],
    fees: { gridFeePerKwh: 0, taxPerKwh: 0 },
    spot: {
      actual: {
        units: { currency: 'NOK', energyUnit: 'kWh' },
        resolutionMinutes: 60,
        points: Array.from({ length: 24 }, (_, i) => ({ startMs: from + i * hour, price: 1 + (i % 3) / 10 })),
      },
    },
  });
  const plan = makePlan(
    {
      slots,
      timezone: 'Europe/Oslo',
      currency: 'NOK',
      location: { limitKw: 17, baseLoadKw: 0 },
      ev: { id: 'car', energyNeededKwh: 20, departureMs: planned, minPowerKw: 4.1, maxPowerKw: 11, efficiency: 0.9 },
    },
    now,
  );
  return homeView({
    config,
    nowMs: now,
    plan,
    control: null,
    devices: new Map(),
    jobs: [],
    locationId: 'loc',
    wishes: () => ({ mode: 'auto', boostUntilMs: null, floorC: null, departureMs: commandMs, targetKwh: null, targetSocPct: null }),
    outbox: { pending: 0, sending: 0, accepted: 0, rejected: 0, oldestPendingDeadlineMs: null, nextAttemptMs: null },
    events: [],
    resources: new Map(),
  });
}

describe('the departure in the views', () => {
  it('is the one the plan charges for when no command set one', () => {
    const v = viewWith(null);
    expect(v.devices[0]?.ev?.departure).toBe(new Date(planned).toISOString());
    const t = haTopics('ws');
    expect(stateMessages(t, v).get(t.deviceField('car', 'departure'))).toBe(new Date(planned).toISOString());
  });

  it("is the command's when one set it", () => {
    const commanded = Date.UTC(2026, 2, 3, 7, 30);
    expect(viewWith(commanded).devices[0]?.ev?.departure).toBe(new Date(commanded).toISOString());
  });
});
