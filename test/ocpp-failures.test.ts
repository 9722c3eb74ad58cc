/**
 * Failure paths of the OCPP central system and charger, over real sockets on 127.0.0.1: the port
 * already taken at start, a charge point whose connection drops mid-session, and a charge point
 * that answers Rejected to a charging limit or to the remote stop.
 */
import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { buildDevice } from '../src/devices/factory.js';
import { listenRetryMs, startCentralSystem } from '../src/devices/ocpp/start.js';
import { createOcppChargePointSim } from '../src/sandbox/devices/ocpp-charge-point-sim.js';
import { eventually } from './helpers/aedes.js';
import { memoryLogger } from './fixtures/modbus/servers.js';
import { closeOpened, ocppConfig, never, open, password, startMs, world } from './helpers/ocpp-world.js';
import { bootWaitMs } from '../src/devices/ocpp/link.js';

afterEach(closeOpened);

describe('OCPP failure paths', () => {
  it('a port already taken at start: OCPP_LISTEN_FAILED once, chargers unreachable, and it binds once the port is free', async () => {
    const squatter = createServer();
    const port = await new Promise<number>((resolve) =>
      squatter.listen(0, '127.0.0.1', () => resolve((squatter.address() as { port: number }).port)),
    );
    const config = ocppConfig(port);
    const clock = new ManualClock(startMs);
    const { logger, lines } = memoryLogger();
    const cs = await startCentralSystem(config, { clock, logger });
    open.push(cs);
    expect(lines.filter((l) => l['code'] === 'OCPP_LISTEN_FAILED')).toHaveLength(1);
    const built = buildDevice(config.devices[0]!, { buses: new Map(), mqtt: null, ocpp: cs, clock, logger });
    open.push({ close: async () => built.close() });
    await expect(built.capabilities.chargeCurrentLimit!.setCurrentA(10, never)).rejects.toMatchObject({ code: 'DEVICE_UNREACHABLE' });
    await expect(built.capabilities.evStateReader!.readEvState(never)).rejects.toMatchObject({ code: 'DEVICE_UNREACHABLE' });

    // Still taken at the first retry: no new error line, no crash.
    await clock.advance(listenRetryMs);
    await new Promise((r) => setTimeout(r, 50));
    expect(lines.filter((l) => l['code'] === 'OCPP_LISTEN_FAILED')).toHaveLength(1);

    await new Promise<void>((resolve) => squatter.close(() => resolve()));
    await clock.advance(listenRetryMs);
    await eventually(() => expect(lines.some((l) => l['msg'] === 'OCPP central system bound its port after all')).toBe(true));
    const sim = createOcppChargePointSim({
      url: `ws://127.0.0.1:${port}/ocpp`,
      identity: 'cp1',
      password,
      startMs,
      plugs: [{ atMs: startMs, battery: { capacityKwh: 60, socPct: 50 } }],
    });
    open.push(sim);
    await sim.start();
    await eventually(async () =>
      expect(await built.capabilities.evStateReader?.readEvState(never)).toEqual({ plugged: true, charging: false, connectorStatus: 'Preparing' }),
    );
    await built.capabilities.chargeCurrentLimit!.setCurrentA(10, never);
    await eventually(() => expect(sim.offeredA).toBe(10));
  });

  it('a connection that drops mid-session: unreachable while away, the safe default after the lease, the limit back on reconnection', async () => {
    const w = await world({ relay: true });
    await w.charger.chargeCurrentLimit.setCurrentA(12, never);
    await eventually(() => expect(w.sim.offeredA).toBe(12));
    const tx = w.sim.transactionId;

    w.relay!.cut();
    await eventually(() => expect(w.cs.link('cp1').connected).toBe(false));
    expect(w.lines.some((l) => l['code'] === 'DEVICE_UNREACHABLE' && l['msg'] === 'charge point disconnected')).toBe(true);
    await expect(w.charger.powerMeter!.readPowerW(never)).rejects.toMatchObject({ code: 'DEVICE_UNREACHABLE' });
    await expect(w.charger.chargeCurrentLimit.setCurrentA(16, never)).rejects.toMatchObject({ code: 'DEVICE_UNREACHABLE' });
    // The charger goes on charging at the leased limit, then drops to the safe default on its own.
    await w.step(300_000);
    expect(w.sim.offeredA).toBe(12);
    await w.step(310_000);
    expect(w.sim.offeredA).toBe(6);
    expect(w.sim.transactionId).toBe(tx);

    w.relay!.restore();
    await eventually(() => expect(w.cs.link('cp1').connected).toBe(true), 10_000);
    // A reconnection is not a boot: the central system's requests go once the charge point has stayed silent a while.
    await w.clock.advance(bootWaitMs);
    // The session is the one the link knew; the limit wattshift last set (16 A) is applied again.
    await eventually(() => expect(w.sim.offeredA).toBe(16));
    expect(w.sim.transactionId).toBe(tx);
    expect(w.sim.received().filter((m) => m === 'RemoteStartTransaction')).toHaveLength(1);
  });

  it('a refused lower limit stops the session (OCPP_LIMIT_REFUSED); a refused higher one keeps the lower', async () => {
    const w = await world();
    await w.charger.chargeCurrentLimit.setCurrentA(10, never);
    await eventually(() => expect(w.sim.offeredA).toBe(10));

    w.sim.refuse(['SetChargingProfile']);
    await expect(w.charger.chargeCurrentLimit.setCurrentA(16, never)).rejects.toMatchObject({ code: 'OCPP_CALL_FAILED' });
    await w.sim.settle();
    expect(w.sim.offeredA).toBe(10);
    expect(w.sim.status).toBe('Charging');
    expect(w.lines.some((l) => l['code'] === 'OCPP_LIMIT_REFUSED')).toBe(false);

    // The fuse asks for 8 A (less than the 10 A in force): the charger will not, so the session ends
    // (once the transaction is half a minute old: before, a refusal may cross its start).
    await w.clock.advance(31_000);
    await w.charger.chargeCurrentLimit.limitCurrentA(8, never);
    await eventually(() => expect(w.sim.transactionId).toBeUndefined());
    expect(w.sim.powerW).toBe(0);
    expect(w.lines.filter((l) => l['code'] === 'OCPP_LIMIT_REFUSED')).toHaveLength(1);
  });

  it('a charger that refuses every limit after a remote start is not started again on every tick: the hold doubles from 5 minutes', async () => {
    const w = await world();
    w.sim.refuse(['SetChargingProfile']);
    const starts = () => w.sim.received().filter((m) => m === 'RemoteStartTransaction').length;
    // The plan wants 16 A; the fuse then asks for 8 A, which the charger refuses: the session ends.
    await w.charger.chargeCurrentLimit.setCurrentA(16, never);
    await eventually(() => expect(w.sim.transactionId).toBeDefined());
    await w.clock.advance(31_000); // past the half minute in which a refusal may cross the start
    await w.charger.chargeCurrentLimit.limitCurrentA(8, never);
    await eventually(() => expect(w.sim.transactionId).toBeUndefined());
    // Ticks every 10 s for 4 minutes: the plan still wants 16 A, nothing is started.
    for (let i = 0; i < 24; i++) {
      await w.clock.advance(10_000);
      await w.charger.chargeCurrentLimit.setCurrentA(16, never);
    }
    expect(starts()).toBe(1);
    await w.clock.advance(70_000); // past 5 minutes: one more try
    await w.charger.chargeCurrentLimit.setCurrentA(16, never);
    await eventually(() => expect(starts()).toBe(2));
    await eventually(() => expect(w.sim.transactionId).toBeDefined());
    await w.clock.advance(31_000);
    await w.charger.chargeCurrentLimit.limitCurrentA(8, never); // refused again: stopped, now held 10 minutes
    await eventually(() => expect(w.sim.transactionId).toBeUndefined());
    const holds = w.lines.filter((l) => l['code'] === 'OCPP_LIMIT_REFUSED').map((l) => l['holdS']);
    expect(holds).toEqual([300, 600]);
    expect(w.lines.filter((l) => l['code'] === 'OCPP_DEFAULT_REFUSED')).toHaveLength(1);
    await w.clock.advance(9 * 60_000);
    await w.charger.chargeCurrentLimit.setCurrentA(16, never);
    expect(starts()).toBe(2);
  });

  it('a limit refused for a transaction the charger has just started is asked again, not a reason to stop it', async () => {
    const w = await world();
    await w.charger.chargeCurrentLimit.setCurrentA(16, never);
    await eventually(() => expect(w.sim.offeredA).toBe(16));
    w.sim.refuse(['SetChargingProfile']);
    await expect(w.charger.chargeCurrentLimit.limitCurrentA(6, never)).rejects.toMatchObject({ code: 'OCPP_CALL_FAILED' });
    expect(w.sim.received().filter((m) => m === 'RemoteStopTransaction')).toHaveLength(0);
    expect(w.sim.transactionId).toBeDefined();
    expect(w.lines.filter((l) => l['code'] === 'OCPP_LIMIT_REFUSED').map((l) => l['level'])).toEqual([40]); // warn
    // The next tick, the charger knows its transaction: the limit holds.
    w.sim.refuse([]);
    await w.clock.advance(10_000);
    await w.charger.chargeCurrentLimit.limitCurrentA(6, never);
    await eventually(() => expect(w.sim.offeredA).toBe(6));
  });

  // Whether the charger answers the status request or refuses it too, the outcome is the same.
  it.each([[[]], [['TriggerMessage']]])(
    'a charger that refuses both the lower limit and the remote stop (and also %j) is OCPP_CHARGER_UNCONTROLLED, logged once',
    async (alsoRefused: string[]) => {
      const w = await world();
      await w.charger.chargeCurrentLimit.setCurrentA(16, never);
      await eventually(() => expect(w.sim.offeredA).toBe(16));
      await w.clock.advance(60_000); // a transaction the charger knows well
      w.sim.refuse(['SetChargingProfile', 'RemoteStopTransaction', ...alsoRefused]);
      // The first time, the transaction may have just ended: the charger is asked for its status.
      await expect(w.charger.chargeCurrentLimit.limitCurrentA(6, never)).rejects.toMatchObject({ code: 'OCPP_CALL_FAILED' });
      await w.sim.settle();
      expect(w.sim.received().filter((m) => m === 'TriggerMessage').length).toBeGreaterThan(2); // two on connection
      // It still runs: uncontrolled, logged once however often it is tried.
      for (const a of [6, 6]) {
        await expect(w.charger.chargeCurrentLimit.limitCurrentA(a, never)).rejects.toMatchObject({ code: 'OCPP_CHARGER_UNCONTROLLED' });
      }
      expect(w.lines.filter((l) => l['code'] === 'OCPP_CHARGER_UNCONTROLLED')).toHaveLength(1);
      expect(w.sim.received().filter((m) => m === 'RemoteStopTransaction')).toHaveLength(3);

      // Once it accepts again, the limit holds and the next failure would be logged afresh.
      w.sim.refuse([]);
      await w.charger.chargeCurrentLimit.limitCurrentA(6, never);
      await w.sim.settle();
      expect(w.sim.offeredA).toBe(6);
    },
  );
});
