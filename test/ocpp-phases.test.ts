/**
 * OCPP 1.6 phase switching over a real WebSocket: wattshift sends the phase count as the TxProfile
 * period's `numberPhases` (§7.13), and the simulated charge point charges on that many phases.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from './helpers/aedes.js';
import { closeOpened, never, world } from './helpers/ocpp-world.js';

afterEach(closeOpened);

const txPeriod = (w: Awaited<ReturnType<typeof world>>) =>
  w.sim.profiles().find((p) => p.profile.chargingProfilePurpose === 'TxProfile')?.profile.chargingSchedule.chargingSchedulePeriod[0];

describe('OCPP phase switching (numberPhases)', () => {
  it("sends numberPhases in the session's profile; the charge point charges on that many phases", async () => {
    const w = await world();
    await w.charger.chargeCurrentLimit.setCurrentA(16, never);
    await eventually(() => expect(w.sim.status).toBe('Charging'));
    await w.sim.settle();
    expect(txPeriod(w)).toEqual({ startPeriod: 0, limit: 16 }); // never set: no numberPhases, 3 assumed
    expect([w.sim.phasesNow, w.sim.powerW]).toEqual([3, 16 * 3 * 230]);

    await w.charger.phaseSwitch.setPhases(1, never);
    await w.sim.settle();
    expect(txPeriod(w)).toEqual({ startPeriod: 0, limit: 16, numberPhases: 1 });
    expect([w.sim.phasesNow, w.sim.powerW]).toEqual([1, 16 * 230]);
    // The next limit keeps the phase count; the same phase count sends nothing.
    const sent = w.sim.received().length;
    await w.charger.phaseSwitch.setPhases(1, never);
    expect(w.sim.received().length).toBe(sent);
    await w.charger.chargeCurrentLimit.setCurrentA(10, never);
    await w.sim.settle();
    expect(txPeriod(w)).toEqual({ startPeriod: 0, limit: 10, numberPhases: 1 });
    expect(w.sim.powerW).toBe(10 * 230);

    await w.charger.phaseSwitch.setPhases(3, never);
    await w.sim.settle();
    expect([w.sim.phasesNow, w.sim.powerW]).toEqual([3, 10 * 3 * 230]);
    // The safe default profile carries no phase count.
    const def = w.sim.profiles().find((p) => p.profile.chargingProfilePurpose === 'TxDefaultProfile');
    expect(def?.profile.chargingSchedule.chargingSchedulePeriod[0]).not.toHaveProperty('numberPhases');
    // OCPP 1.6 has no reading of the phases in use.
    expect(await w.charger.evStateReader!.readEvState(never)).not.toHaveProperty('phases');
  });

  it('a phase count set before the session starts goes with the remote start', async () => {
    const w = await world();
    await w.charger.phaseSwitch.setPhases(1, never);
    expect(w.sim.received()).not.toContain('RemoteStartTransaction');
    await w.charger.chargeCurrentLimit.setCurrentA(12, never);
    await eventually(() => expect(w.sim.status).toBe('Charging'));
    await w.sim.settle();
    expect([w.sim.phasesNow, w.sim.powerW]).toEqual([1, 12 * 230]);
  });
});
