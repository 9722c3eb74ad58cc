/**
 * A cap with a window, put into an OCPP charge point itself: a ChargePointMaxProfile on connector 0
 * in absolute time (validFrom/validTo) at the cap's current, so that a charger whose wattshift
 * dies holds the cap to the window's end instead of falling back to its safe current when the
 * lease of wattshift's own limit ends. Checked on the simulated charge point's own offered current
 * after wattshift is gone, and frame by frame against the charge point built from the specification.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { createOcppCharger } from '../src/devices/ocpp/ocpp-charger.js';
import { superviseDevice } from '../src/devices/supervisor.js';
import { memoryLogger } from './fixtures/modbus/servers.js';
import { eventually } from './helpers/aedes.js';
import { closeOpened, never, open, password, startCentral, startMs, world } from './helpers/ocpp-world.js';
import { createSpecChargePoint } from './helpers/spec-charge-point.js';

afterEach(closeOpened);

const hour = 3_600_000;

describe('a cap held by the OCPP charge point itself', () => {
  it("holds a 0 A cap to the window's end after wattshift dies, then the charger falls back to its safe current", async () => {
    const w = await world();
    const car = superviseDevice(
      { id: 'car', kind: 'evCharger', capabilities: w.charger, safeCurrentA: 6, leaseMs: 600_000, readTimeoutMs: 2000 },
      { clock: w.clock, logger: memoryLogger().logger },
    );
    await car.applyCurrent(16);
    await eventually(() => expect(w.sim.offeredA).toBe(16));

    // A 0 kW cap for 20 minutes (twice the lease) starts: the current it allows goes into the charger with the window.
    const capEndMs = w.clock.nowMs() + 20 * 60_000;
    await car.applyCurrent(0, capEndMs);
    await w.sim.settle();
    expect(w.sim.offeredA).toBe(0);

    // wattshift is killed: nothing renews its leased limit, nothing is released.
    await w.cs.close();
    w.charger.close();
    await w.sim.advance(601_000); // past the lease
    expect(w.sim.offeredA).toBe(0);
    await w.sim.advance(capEndMs - startMs - 601_000 - 1000); // a second before the window's end
    expect(w.sim.offeredA).toBe(0);
    await w.sim.advance(2000);
    expect(w.sim.offeredA).toBe(6);
  });

  it('is left in the charger when wattshift stops; lifted when the cap ends early', async () => {
    const w = await world();
    const car = superviseDevice(
      { id: 'car', kind: 'evCharger', capabilities: w.charger, safeCurrentA: 6, leaseMs: 600_000, readTimeoutMs: 2000 },
      { clock: w.clock, logger: memoryLogger().logger },
    );
    await car.applyCurrent(16);
    await eventually(() => expect(w.sim.offeredA).toBe(16));
    await car.applyCurrent(8, w.clock.nowMs() + hour);
    // The event is withdrawn: the cap leaves the charger.
    await car.applyCurrent(16);
    await w.sim.settle();
    expect(w.sim.profiles().some((p) => p.profile.chargingProfilePurpose === 'ChargePointMaxProfile')).toBe(false);
    expect(w.sim.offeredA).toBe(16);

    await car.applyCurrent(0, w.clock.nowMs() + hour);
    await car.stop();
    await w.sim.settle();
    expect(w.sim.offeredA).toBe(0);
  });

  it('sends the cap as the specification has it: ChargePointMaxProfile on connector 0, absolute, valid for the window; again on reconnection', async () => {
    const clock = new ManualClock(startMs);
    const { cs, port } = await startCentral(clock, memoryLogger().logger);
    const charger = createOcppCharger(cs.link('cp1'), {
      id: 'car',
      connectorId: 1,
      idTag: 'wattshift',
      maxCurrentA: 16,
      safeCurrentA: 6,
      leaseS: 600,
      staleAfterS: 120,
      clock,
      logger: memoryLogger().logger,
    });
    open.push({ close: async () => charger.close() });
    const cp = createSpecChargePoint({ url: `ws://127.0.0.1:${port}/ocpp`, identity: 'cp1', password, startMs });
    open.push(cp);
    await cp.connect();
    await cp.boot();
    await cp.status(1, 'Available');
    await eventually(() => expect(cp.received.filter((r) => r.action === 'TriggerMessage')).toHaveLength(2));

    const untilMs = startMs + 3 * hour;
    await charger.chargeCurrentLimit.holdCapA({ maxCurrentA: 4, untilMs }, never);
    const cap = () => cp.profiles.find((p) => p.profile.chargingProfilePurpose === 'ChargePointMaxProfile');
    expect(cap()).toMatchObject({
      connectorId: 0,
      profile: {
        chargingProfileKind: 'Absolute',
        validFrom: new Date(startMs).toISOString(),
        validTo: new Date(untilMs).toISOString(),
        chargingSchedule: {
          chargingRateUnit: 'A',
          startSchedule: new Date(startMs).toISOString(),
          duration: 3 * 3600,
          chargingSchedulePeriod: [{ startPeriod: 0, limit: 0 }],
        },
      },
    });

    // The charger reconnects (not a boot): the cap goes again.
    const before = cp.received.length;
    await cp.disconnect();
    await cp.connect();
    await eventually(() => expect(cs.link('cp1').connected).toBe(true));
    await cp.heartbeat();
    await eventually(() =>
      expect(
        cp.received
          .slice(before)
          .some(
            (r) =>
              (r.payload['csChargingProfiles'] as { chargingProfilePurpose?: string } | undefined)?.chargingProfilePurpose ===
              'ChargePointMaxProfile',
          ),
      ).toBe(true),
    );

    await charger.chargeCurrentLimit.holdCapA(undefined, never);
    expect(cap()).toBeUndefined();
    expect(cp.problems).toEqual([]);
  });
});
