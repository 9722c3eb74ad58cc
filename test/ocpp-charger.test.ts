/**
 * The OCPP 1.6J charger against the simulated charge point over real WebSockets on 127.0.0.1:
 * authentication, charging limits as profiles, energy into hours, restarts and reconnection,
 * malformed frames and an unreachable charger.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RPCClient } from 'ocpp-rpc';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { accumulate, closeHoursBefore, initialMeteringState, type MeteringState } from '../src/core/metering.js';
import { createServer } from 'node:net';
import { buildDevice } from '../src/devices/factory.js';
import { startCentralSystem } from '../src/devices/ocpp/start.js';
import { superviseDevice } from '../src/devices/supervisor.js';
import { eventually } from './helpers/aedes.js';
import { memoryLogger } from './fixtures/modbus/servers.js';
import { createCentralSystem } from '../src/devices/ocpp/central-system.js';
import { createOcppCharger } from '../src/devices/ocpp/ocpp-charger.js';
import { createOcppChargePointSim } from '../src/sandbox/devices/ocpp-charge-point-sim.js';
import { storedSessionTags } from '../src/devices/ocpp/session-tags.js';
import { openStore } from '../src/store/open-store.js';
import { closeOpened, ocppConfig, never, open, password, startCentral, startMs, world } from './helpers/ocpp-world.js';
import { bootWaitMs } from '../src/devices/ocpp/link.js';
import { selfSignedCert } from './helpers/self-signed.js';

afterEach(closeOpened);

describe('OCPP 1.6J charger', () => {
  it("boots the charge point with the central system's heartbeat interval and its safe default profile", async () => {
    const w = await world();
    expect(w.sim.config('HeartbeatInterval')).toBe('30');
    expect(w.sim.config('MeterValuesSampledData')).toBe('Energy.Active.Import.Register,Power.Active.Import');
    const def = w.sim.profiles().find((p) => p.profile.chargingProfilePurpose === 'TxDefaultProfile');
    expect(def?.profile.chargingSchedule.chargingSchedulePeriod).toEqual([{ startPeriod: 0, limit: 6 }]);
    expect(await w.charger.evStateReader?.readEvState(never)).toEqual({ plugged: true, charging: false, connectorStatus: 'Preparing' });
  });

  it("learns an idle connector's energy register on connection (no transaction sends meter values)", async () => {
    const w = await world({ plugged: false });
    await eventually(async () => expect(await w.charger.energyMeter!.readEnergyKwh(never)).toBe(0));
    expect(w.sim.received().filter((m) => m === 'TriggerMessage')).toHaveLength(2);
    expect(w.sim.transactionId).toBeUndefined();
  });

  it('refuses a wrong password and an unknown charge point, logging OCPP_AUTH_REJECTED', async () => {
    const clock = new ManualClock(startMs);
    const { logger, lines } = memoryLogger();
    const { port } = await startCentral(clock, logger);
    for (const [identity, pw] of [
      ['cp1', 'not-the-password-0'],
      ['cp9', password],
      ['cp1', undefined],
    ] as const) {
      const client = new RPCClient({
        endpoint: `ws://127.0.0.1:${port}/ocpp`,
        identity,
        password: pw ?? null,
        protocols: ['ocpp1.6'],
        reconnect: false,
      } as ConstructorParameters<typeof RPCClient>[0]);
      await expect(client.connect()).rejects.toThrow();
    }
    const refused = lines.filter((l) => l['code'] === 'OCPP_AUTH_REJECTED').map((l) => l['why']);
    expect(refused).toEqual(['wrong password', 'unknown charge point id', 'no password (basic auth) given']);
  });

  it('starts a session remotely at the planned current, pauses it at 0 A and resumes it', async () => {
    const w = await world();
    await w.charger.chargeCurrentLimit.setCurrentA(10, never);
    await eventually(() => expect(w.sim.status).toBe('Charging'));
    await w.sim.settle();
    expect(w.sim.offeredA).toBe(10);
    expect(w.sim.powerW).toBe(10 * 3 * 230);
    expect(w.sim.received()).toContain('RemoteStartTransaction');
    await w.step(60_000);
    const ev = await w.charger.evStateReader!.readEvState(never);
    expect(ev).toMatchObject({ plugged: true, charging: true });
    expect(ev.sessionKwh).toBeCloseTo((6900 * 60) / 3_600_000, 2); // one minute at 6.9 kW, whole Wh
    expect(await w.charger.powerMeter?.readPowerW(never)).toBe(6900);

    await w.charger.chargeCurrentLimit.setCurrentA(3, never); // below 6 A: a pause, not a stop
    await w.sim.settle();
    expect(w.sim.status).toBe('SuspendedEVSE');
    expect(w.sim.transactionId).toBeDefined();
    await eventually(async () => expect(await w.charger.powerMeter?.readPowerW(never)).toBe(0));

    await w.charger.chargeCurrentLimit.setCurrentA(40, never); // capped at maxCurrentA
    await w.sim.settle();
    expect(w.sim.offeredA).toBe(16);
  });

  it('the safe state only lowers: limitCurrentA never starts a session', async () => {
    const w = await world();
    await w.charger.chargeCurrentLimit.limitCurrentA(16, never);
    await w.sim.settle();
    expect(w.sim.transactionId).toBeUndefined();
    expect(w.sim.received()).not.toContain('RemoteStartTransaction');
    await w.charger.chargeCurrentLimit.setCurrentA(16, never);
    await eventually(() => expect(w.sim.status).toBe('Charging'));
    await w.charger.chargeCurrentLimit.limitCurrentA(8, never);
    await w.sim.settle();
    expect(w.sim.offeredA).toBe(8);
  });

  it('a car that starts its own session (a card) begins at the limit wattshift holds, not at the safe current; without wattshift, at the safe current', async () => {
    const plug = (atMs: number, untilMs?: number) => ({
      atMs,
      ...(untilMs !== undefined ? { untilMs } : {}),
      idTag: 'CARD-1',
      battery: { capacityKwh: 60, socPct: 20 },
    });
    const w = await world({
      plugs: [plug(startMs + 60_000, startMs + 120_000), plug(startMs + 180_000, startMs + 240_000), plug(startMs + 1_500_000)],
    });
    await w.charger.chargeCurrentLimit.setCurrentA(0, never); // nothing planned, or the fuse is full
    await w.step(60_000);
    await eventually(() => expect(w.sim.transactionId).toBeDefined());
    await w.sim.settle();
    expect(w.sim.status).toBe('SuspendedEVSE');
    expect(w.sim.offeredA).toBe(0);
    await w.step(60_000); // the car leaves
    await w.charger.chargeCurrentLimit.setCurrentA(10, never);
    await w.step(60_000); // the next car comes at 10 A
    await eventually(() => expect(w.sim.status).toBe('Charging'));
    await w.sim.settle();
    expect(w.sim.offeredA).toBe(10);
    expect(w.sim.received()).not.toContain('RemoteStartTransaction');
    await w.step(60_000);
    // wattshift stops renewing; its leased default runs out, so the third car starts at the charger's own safe current.
    w.charger.close();
    await w.sim.advance(1_300_000);
    await w.sim.settle();
    expect(w.sim.status).toBe('Charging');
    expect(w.sim.offeredA).toBe(6);
  });

  it('meters the MeterValues energy into hours that match the charge point', async () => {
    const w = await world();
    await w.charger.chargeCurrentLimit.setCurrentA(16, never);
    await eventually(() => expect(w.sim.status).toBe('Charging'));
    let state: MeteringState = initialMeteringState('counter');
    const hours = new Map<number, number>();
    for (let i = 0; i < 150; i++) {
      await w.step(60_000);
      const r = await w.charger.energyMeter!.readStampedEnergyKwh!(never);
      const res = accumulate(state, { atMs: r.atMs, kwh: r.kwh });
      state = res.state;
      for (const h of res.closedHours) hours.set(h.hourStartMs, h.kwh);
    }
    for (const h of closeHoursBefore(state, startMs + 2 * 3_600_000).closedHours) hours.set(h.hourStartMs, h.kwh);
    // The session's energy: the register since StartTransaction's meterStart, as of the last MeterValues.
    const session = (await w.charger.evStateReader!.readEvState(never)).sessionKwh!;
    expect(Math.abs(session - w.sim.totalWh / 1000)).toBeLessThan(0.2);
    expect(session).toBeGreaterThan(20);
    const truth = w.sim.energyKwhByHour();
    const first = truth.get(startMs) ?? 0;
    expect(first).toBeGreaterThan(10); // 11 kW for most of the hour
    // Samples are whole Wh once a minute: each hour within a minute's energy of the truth.
    expect(Math.abs((hours.get(startMs) ?? 0) - first)).toBeLessThan(0.2);
    expect(Math.abs((hours.get(startMs + 3_600_000) ?? 0) - (truth.get(startMs + 3_600_000) ?? 0))).toBeLessThan(0.2);
  });

  it('lets the session fall back to the safe default when the lease is not renewed', async () => {
    const w = await world();
    await w.charger.chargeCurrentLimit.setCurrentA(16, never);
    await eventually(() => expect(w.sim.offeredA).toBe(16));
    await w.cs.close(); // wattshift is gone: nobody renews the 600 s lease
    await w.sim.advance(599_000);
    expect(w.sim.offeredA).toBe(16);
    await w.sim.advance(2_000);
    expect(w.sim.offeredA).toBe(6);
    expect(w.sim.status).toBe('Charging');
  });

  it('after a restart of the central system the charge point reconnects and the session gets its limit back', async () => {
    const statePath = join(mkdtempSync(join(tmpdir(), 'ocpp-')), 'cp.json');
    const w = await world({ statePath });
    await w.charger.chargeCurrentLimit.setCurrentA(12, never);
    await eventually(() => expect(w.sim.offeredA).toBe(12));
    const tx = w.sim.transactionId;
    await w.cs.close();
    w.charger.close();
    await eventually(() => expect(w.sim.connected).toBe(false));

    const { cs } = await startCentral(w.clock, memoryLogger().logger, w.port);
    const charger = createOcppCharger(cs.link('cp1'), {
      id: 'car',
      connectorId: 1,
      idTag: 'wattshift',
      maxCurrentA: 16,
      safeCurrentA: 6,
      leaseS: 600,
      staleAfterS: 120,
      clock: w.clock,
      logger: memoryLogger().logger,
    });
    open.push({ close: async () => charger.close() });
    await eventually(() => expect(cs.link('cp1').connected).toBe(true), 10_000);
    // A reconnection is not a boot: the central system's requests go once the charge point has stayed silent a while.
    await w.clock.advance(bootWaitMs);
    await eventually(async () =>
      expect(await charger.evStateReader?.readEvState(never)).toEqual({ plugged: true, charging: true, connectorStatus: 'Charging' }),
    );
    await w.sim.advance(60_000); // a MeterValues tells the new central system the running transaction
    await eventually(() => expect(cs.link('cp1').transactionOn(1)).toBe(tx));
    await charger.chargeCurrentLimit.setCurrentA(8, never);
    await w.sim.settle();
    expect(w.sim.offeredA).toBe(8);
    expect(w.sim.received().filter((m) => m === 'RemoteStartTransaction')).toHaveLength(1);
  });

  it('knows the car of a session its card started after wattshift restarts mid-session, from the store', async () => {
    const store = openStore({ path: join(mkdtempSync(join(tmpdir(), 'ocpp-')), 'wattshift.db') });
    open.push({ close: async () => store.close() });
    const keep = () => storedSessionTags(store, 'car', memoryLogger().logger);
    const w = await world({
      plugs: [{ atMs: startMs, untilMs: startMs + 3_600_000, idTag: 'CARD-7', battery: { capacityKwh: 60, socPct: 20 } }],
      sessionTags: keep(),
    });
    await eventually(async () => expect((await w.charger.evStateReader!.readEvState(never)).idTag).toBe('CARD-7'));
    const tx = w.sim.transactionId;

    // wattshift restarts: a new central system and charger learn the running transaction from its meter values.
    await w.cs.close();
    w.charger.close();
    const { cs } = await startCentral(w.clock, memoryLogger().logger, w.port);
    const charger = createOcppCharger(cs.link('cp1'), {
      id: 'car',
      connectorId: 1,
      idTag: 'wattshift',
      maxCurrentA: 16,
      safeCurrentA: 6,
      leaseS: 600,
      staleAfterS: 120,
      clock: w.clock,
      logger: memoryLogger().logger,
      sessionTags: keep(),
    });
    open.push({ close: async () => charger.close() });
    await eventually(() => expect(cs.link('cp1').connected).toBe(true), 10_000);
    // A reconnection is not a boot: the central system's requests go once the charge point has stayed silent a while.
    await w.clock.advance(bootWaitMs);
    await w.sim.advance(60_000);
    await eventually(() => expect(cs.link('cp1').transactionOn(1)).toBe(tx));
    // The connector's status may come a moment after the meter values that named the transaction.
    await eventually(async () => expect((await charger.evStateReader!.readEvState(never)).idTag).toBe('CARD-7'));

    // The car leaves: the session's tag is forgotten.
    await w.sim.advance(3_600_000);
    await eventually(() => expect(cs.link('cp1').transactionOn(1)).toBeUndefined());
    expect(keep().get()).toBeUndefined();
  });

  it('a restarted charge point keeps its configuration keys and default profile', async () => {
    const statePath = join(mkdtempSync(join(tmpdir(), 'ocpp-')), 'cp.json');
    const w = await world({ statePath, safeCurrentA: 10 });
    await w.sim.close();
    const again = createOcppChargePointSim({ url: 'ws://127.0.0.1:1/unused', identity: 'cp1', startMs, statePath });
    expect(again.config('MeterValueSampleInterval')).toBe('60');
    expect(again.config('HeartbeatInterval')).toBe('30');
    expect(again.profiles().map((p) => p.profile.chargingSchedule.chargingSchedulePeriod[0]?.limit)).toEqual([10]);
  });

  it('answers malformed frames with CALLERROR and goes on serving the charge point', async () => {
    const w = await world({ plugged: false });
    const replies: string[] = [];
    const raw = new RPCClient({
      endpoint: `ws://127.0.0.1:${w.port}/ocpp`,
      identity: 'cp1',
      password,
      protocols: ['ocpp1.6'],
      reconnect: false,
    } as ConstructorParameters<typeof RPCClient>[0]);
    raw.on('message', ({ message, outbound }: { message: string; outbound: boolean }) => {
      if (!outbound) replies.push(String(message));
    });
    open.push(raw);
    await raw.connect();
    raw.sendRaw('[2,"m1","MeterValues",{"connectorId":"one","meterValue":[]}]');
    raw.sendRaw('[2,"m2","StatusNotification",{"connectorId":1,"status":"Exploded","errorCode":"NoError"}]');
    raw.sendRaw('[2,"m3","NoSuchAction",{}]');
    raw.sendRaw('not json at all');
    await eventually(() => expect(replies.filter((r) => r.startsWith('[4,'))).toHaveLength(4));
    expect(replies.find((r) => r.includes('"m1"'))).toMatch(/^\[4,"m1","(TypeConstraintViolation|FormationViolation)"/);
    expect(replies.find((r) => r.includes('"m3"'))).toMatch(/^\[4,"m3","NotImplemented"/);
    await expect(raw.call('Heartbeat', {})).resolves.toMatchObject({ currentTime: new Date(w.clock.nowMs()).toISOString() });
    expect(w.lines.some((l) => l['code'] === 'OCPP_BAD_MESSAGE')).toBe(true);
  });

  it('forgets a transaction whose StopTransaction never came once the connector says Available: no limit is sent for it', async () => {
    const w = await world({ plugged: false });
    // A charge point of our own making in the simulator's place, to lose a StopTransaction on purpose.
    const { raw, link, asked } = await rawChargePointInSession(w, () => 'Accepted');
    // The car leaves; its StopTransaction is lost on the way, the status comes through.
    await raw.call('StatusNotification', { connectorId: 1, status: 'Available', errorCode: 'NoError' });
    expect(link.transactionOn(1)).toBeUndefined();
    const sent = (): number => asked.filter((m) => m === 'SetChargingProfile TxProfile' || m === 'RemoteStopTransaction').length;
    const before = sent();
    await w.charger.chargeCurrentLimit.setCurrentA(0, never);
    expect(sent()).toBe(before);
    // Only what the next session starts at.
    expect(asked.at(-1)).toBe('SetChargingProfile TxDefaultProfile');
  });

  it('a transaction the charger has just ended, its StopTransaction still on the way: the refused limit and stop ask for its status, no error', async () => {
    const w = await world({ plugged: false });
    // The car has left; the charger refuses a profile and a stop for the ended transaction, and its
    // queued StopTransaction goes out once the central system asks for its status.
    const statusAsked = 'TriggerMessage StatusNotification 1';
    const session: { stop?: () => Promise<unknown> } = {};
    const { raw, link, asked, transactionId } = await rawChargePointInSession(w, (request) => {
      if (request === statusAsked) setImmediate(() => void session.stop?.());
      return request.startsWith('TriggerMessage') ? 'Accepted' : 'Rejected';
    });
    session.stop = () =>
      raw.call('StopTransaction', { transactionId, meterStop: 1000, timestamp: new Date(w.clock.nowMs()).toISOString(), reason: 'EVDisconnected' });
    const mine = () => asked.filter((m) => ['SetChargingProfile TxProfile', 'RemoteStopTransaction', statusAsked].includes(m));
    await expect(w.charger.chargeCurrentLimit.setCurrentA(16, never)).rejects.toMatchObject({ code: 'OCPP_CALL_FAILED' });
    await w.clock.advance(60_000); // long past the transaction's start
    await expect(w.charger.chargeCurrentLimit.setCurrentA(0, never)).rejects.toMatchObject({ code: 'OCPP_CALL_FAILED' });
    await eventually(() =>
      expect(mine()).toEqual(['SetChargingProfile TxProfile', 'SetChargingProfile TxProfile', 'RemoteStopTransaction', statusAsked]),
    );
    await eventually(() => expect(link.transactionOn(1)).toBeUndefined());
    // The next tick: no transaction, so only what the next session starts at.
    await w.charger.chargeCurrentLimit.setCurrentA(0, never).catch(() => undefined);
    expect(mine()).toHaveLength(4);
    expect(asked.at(-1)).toBe('SetChargingProfile TxDefaultProfile');
    expect(w.lines.filter((l) => l['level'] === 50)).toEqual([]);
  });

  it('a charger that refuses the leased default is said once per run of refusals', async () => {
    const w = await world({ plugged: false });
    let refuse = true;
    const leased = 'SetChargingProfile TxDefaultProfile';
    const { raw, transactionId, asked } = await rawChargePointInSession(w, (request) => (request === leased && refuse ? 'Rejected' : 'Accepted'));
    await raw.call('StopTransaction', {
      transactionId,
      meterStop: 1000,
      timestamp: new Date(w.clock.nowMs()).toISOString(),
      reason: 'EVDisconnected',
    });
    await raw.call('StatusNotification', { connectorId: 1, status: 'Available', errorCode: 'NoError' });
    const said = (): number => w.lines.filter((l) => l['code'] === 'OCPP_DEFAULT_REFUSED').length;
    const tick = async (): Promise<void> => {
      const before = asked.length;
      await w.charger.chargeCurrentLimit.setCurrentA(8, never);
      expect(asked.slice(before)).toEqual([leased]);
    };
    await tick();
    await tick();
    expect(said()).toBe(1);
    refuse = false;
    await tick();
    refuse = true;
    await tick();
    expect(said()).toBe(2);
  });

  it('an unreachable charge point fails reads and commands with DEVICE_UNREACHABLE and the supervisor marks it down', async () => {
    const w = await world();
    await w.charger.chargeCurrentLimit.setCurrentA(16, never);
    await eventually(() => expect(w.sim.status).toBe('Charging'));
    await w.sim.close();
    await eventually(() => expect(w.cs.link('cp1').connected).toBe(false));
    await expect(w.charger.energyMeter!.readEnergyKwh(never)).rejects.toMatchObject({ code: 'DEVICE_UNREACHABLE' });
    await expect(w.charger.chargeCurrentLimit.setCurrentA(10, never)).rejects.toMatchObject({ code: 'DEVICE_UNREACHABLE' });
    const sup = superviseDevice(
      { id: 'car', kind: 'evCharger', capabilities: w.charger, safeCurrentA: 6, leaseMs: 600_000, readTimeoutMs: 2000, downAfterFailures: 2 },
      { clock: w.clock, logger: memoryLogger().logger },
    );
    await sup.read(never);
    await sup.read(never);
    expect(sup.health().state).toBe('down');
    expect(sup.health().lastError?.code).toBe('DEVICE_UNREACHABLE');
  });

  it("is built from the config: the daemon's central system and an ocpp charger device", async () => {
    const port = await new Promise<number>((resolve) => {
      const srv = createServer().listen(0, '127.0.0.1', () => {
        const p = (srv.address() as { port: number }).port;
        srv.close(() => resolve(p));
      });
    });
    const config = ocppConfig(port);
    const clock = new ManualClock(startMs);
    const logger = memoryLogger().logger;
    const cs = await startCentralSystem(config, { clock, logger });
    open.push(cs);
    const built = buildDevice(config.devices[0]!, { buses: new Map(), mqtt: null, ocpp: cs, clock, logger });
    open.push({ close: async () => built.close() });
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
    await built.capabilities.chargeCurrentLimit?.setCurrentA(7, never);
    await eventually(() => expect(sim.offeredA).toBe(7));
  });

  it('serves wss:// with a certificate (Security Profile 2) and still wants the password', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ocpp-tls-'));
    const { cert, key } = selfSignedCert(dir);
    const clock = new ManualClock(startMs);
    const cs = createCentralSystem({
      host: '127.0.0.1',
      port: 0,
      heartbeatIntervalS: 30,
      meterValueSampleIntervalS: 60,
      chargePoints: [{ id: 'cp1', password }],
      tls: { cert, key },
      clock,
      logger: memoryLogger().logger,
    });
    open.push(cs);
    const port = await cs.listen();
    const wrong = new RPCClient({
      endpoint: `wss://127.0.0.1:${port}/ocpp`,
      identity: 'cp1',
      password: 'not-the-password-0',
      protocols: ['ocpp1.6'],
      reconnect: false,
      wsOpts: { ca: cert },
    } as ConstructorParameters<typeof RPCClient>[0]);
    await expect(wrong.connect()).rejects.toThrow();
    const plain = new RPCClient({
      endpoint: `ws://127.0.0.1:${port}/ocpp`,
      identity: 'cp1',
      password,
      protocols: ['ocpp1.6'],
      reconnect: false,
    } as ConstructorParameters<typeof RPCClient>[0]);
    await expect(plain.connect()).rejects.toThrow();
    const sim = createOcppChargePointSim({ url: `wss://127.0.0.1:${port}/ocpp`, identity: 'cp1', password, startMs, ca: cert });
    open.push(sim);
    await sim.start();
    await eventually(() => expect(cs.link('cp1').connected).toBe(true));
    await eventually(async () => {
      await sim.settle();
      expect(sim.config('HeartbeatInterval')).toBe('30');
    });
  });
});

/** A charge point of the test's own making in the simulator's place, in a transaction; `answer` gives each request's status (by its label in `asked`). */
async function rawChargePointInSession(w: Awaited<ReturnType<typeof world>>, answer: (method: string) => string) {
  await w.sim.close();
  const link = w.cs.link('cp1');
  await eventually(() => expect(link.connected).toBe(false));
  const raw = new RPCClient({
    endpoint: `ws://127.0.0.1:${w.port}/ocpp`,
    identity: 'cp1',
    password,
    protocols: ['ocpp1.6'],
    reconnect: false,
  } as ConstructorParameters<typeof RPCClient>[0]);
  open.push(raw);
  const asked: string[] = [];
  raw.handle(
    async ({
      method = '',
      params,
    }: {
      method?: string;
      params?: { csChargingProfiles?: { chargingProfilePurpose?: string }; requestedMessage?: string; connectorId?: number };
    }) => {
      const what =
        method === 'TriggerMessage'
          ? `${params?.requestedMessage} ${params?.connectorId ?? 'all'}`
          : (params?.csChargingProfiles?.chargingProfilePurpose ?? '');
      asked.push(`${method} ${what}`.trim());
      return { status: answer(asked.at(-1)!) };
    },
  );
  await raw.connect();
  await raw.call('BootNotification', { chargePointVendor: 'raw', chargePointModel: 'raw' });
  await raw.call('StatusNotification', { connectorId: 1, status: 'Charging', errorCode: 'NoError' });
  const { transactionId } = (await raw.call('StartTransaction', {
    connectorId: 1,
    idTag: 'CARD',
    meterStart: 0,
    timestamp: new Date(w.clock.nowMs()).toISOString(),
  })) as { transactionId: number };
  expect(link.transactionOn(1)).toBe(transactionId);
  // What the central system asks on every connection, once the boot is answered, is over.
  await eventually(() => expect(asked).toContain('TriggerMessage MeterValues all'));
  return { raw, link, asked, transactionId };
}
