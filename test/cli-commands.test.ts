/**
 * The register, status, plan, probe, sandbox and demo commands, in process through the same
 * dispatcher main.ts calls, against real peers: the API sandbox over HTTP, a simulated Modbus TCP
 * tank, an embedded MQTT broker with a simulated go-e charger, SQLite files in a temp dir. Plus one
 * spawned, shortened demo.
 */
import { EventEmitter } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../src/cli/dispatch.js';
import { queryDaemon } from '../src/cli/live-view.js';
import type { ConfigInput } from '../src/config/schema.js';
import { buildPriceSeries, plan } from '../src/core/index.js';
import { startEmbeddedBroker, type EmbeddedBroker } from '../src/demo/broker.js';
import { demoCoordinates, demoMeterPointId } from '../src/demo/environment.js';
import { findFreePort, startSimulatedTank, type SimulatedTank } from '../src/sandbox/devices/modbus-tank.js';
import { createGoeSim, type GoeSim } from '../src/sandbox/devices/goe-sim.js';
import { startSandbox, type Sandbox } from '../src/sandbox/server.js';
import { DaemonMetrics } from '../src/status/metrics.js';
import { startStatusServer, type StatusServer } from '../src/status/server.js';
import { openStore } from '../src/store/index.js';
import { sampleView, t0 } from './fixtures/ha/sample-view.js';
import { start } from './fixtures/config/cli-helpers.js';
import { suiteTempDir, tempDir } from './helpers/temp-dir.js';

const H = 3_600_000;

interface Run {
  code: number;
  out: string[];
  err: string[];
  stdout: string;
  stderr: string;
}

async function wattshift(args: string[], signals: EventEmitter = new EventEmitter()): Promise<Run> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(args, { stdout: (l) => out.push(l), stderr: (l) => err.push(l), env: {}, signals: signals as never });
  return { code, out, err, stdout: out.join('\n'), stderr: err.join('\n') };
}

let sandbox: Sandbox;
let tank: SimulatedTank;
let broker: EmbeddedBroker;
let charger: GoeSim;
let deadPort: number;
const dir = suiteTempDir('wattshift-cli-commands-');

beforeAll(async () => {
  sandbox = await startSandbox({ seed: 5 });
  tank = await startSimulatedTank({ initialC: 55, params: { volumeL: 200, elementKw: 2, thermostatC: 75 } });
  broker = await startEmbeddedBroker();
  charger = createGoeSim({ url: broker.url, topicPrefix: 'go-eCharger/cli01', startMs: Date.now(), phases: 3, amp: 16, maxCurrentA: 16 });
  await charger.start();
  deadPort = await findFreePort();
});

afterAll(async () => {
  await charger?.close().catch(() => undefined);
  await broker?.close().catch(() => undefined);
  await tank?.close().catch(() => undefined);
  await sandbox?.close().catch(() => undefined);
});

let seq = 0;
/** Writes a config file (JSON is YAML) pointing at the peers; returns its path and the database path. */
function configFile(over: { secret?: string; http?: ConfigInput['http']; db?: string; sparkBase?: string; meterPointIds?: string[] } = {}): {
  file: string;
  db: string;
} {
  const n = ++seq;
  const db = over.db ?? join(dir, `w${n}.db`);
  const doc: ConfigInput = {
    version: 1,
    site: { timezone: 'Europe/Oslo', priceArea: 'NO4', currency: 'NOK', locationLimitKw: 17 },
    spark: {
      baseUrl: over.sparkBase ?? sandbox.baseUrl,
      forecastUrl: sandbox.forecastUrl,
      authUrl: over.sparkBase ?? sandbox.authUrl,
      clientId: sandbox.credentials[0]!.clientId,
      clientSecret: over.secret ?? sandbox.credentials[0]!.clientSecret,
      userId: `cli-user-${n}`,
      locationId: `cli-home-${n}`,
      meterPointIds: over.meterPointIds ?? [demoMeterPointId],
      coordinates: demoCoordinates,
    },
    mqtt: { url: broker.url, clientId: 'wattshift-cli-test' },
    modbus: {
      sim: { type: 'tcp', host: tank.host, port: tank.port, timeoutMs: 1000 },
      dead: { type: 'tcp', host: '127.0.0.1', port: deadPort, timeoutMs: 300 },
    },
    devices: [
      {
        id: 'tank',
        name: 'Hot water',
        kind: 'hotWaterTank',
        switch: { type: 'modbus', bus: 'sim', unitId: 1, profile: 'wattshift-sim-tank' },
        meter: { type: 'modbus', bus: 'sim', unitId: 1, profile: 'wattshift-sim-tank' },
        thermometer: { type: 'modbus', bus: 'sim', unitId: 1, profile: 'wattshift-sim-tank' },
        model: { volumeL: 200, elementKw: 2, floorC: 45, maxC: 75 },
      },
      {
        id: 'car',
        name: 'Garage',
        kind: 'evCharger',
        charger: { type: 'goe', topicPrefix: 'go-eCharger/cli01' },
        safeCurrentA: 6,
        model: { capacityKwh: 60, targetEnergyKwh: 20, departure: '07:00', minCurrentA: 6, maxCurrentA: 16, phases: 3 },
      },
      { id: 'gone', kind: 'meter', meter: { type: 'modbus', bus: 'dead', unitId: 1, profile: 'eastron-sdm120' } },
    ],
    storage: { path: db },
    http: over.http ?? { enabled: false },
  };
  const file = join(dir, `config-${n}.yaml`);
  writeFileSync(file, JSON.stringify(doc, null, 2));
  return { file, db };
}

/** Stores a small real plan (the core planner, 24 hourly slots from the current hour) and some history. */
function seedStore(db: string): { nowHour: number } {
  const nowHour = Math.floor(Date.now() / H) * H;
  const prices = Array.from({ length: 24 }, (_, i) => 0.5 + 0.4 * Math.sin(i / 3));
  const slots = buildPriceSeries({
    slotMinutes: 60,
    fromMs: nowHour,
    toMs: nowHour + 24 * H,
    timezone: 'Europe/Oslo',
    currency: 'NOK',
    spot: {
      actual: {
        units: { currency: 'NOK', energyUnit: 'kWh' },
        resolutionMinutes: 60,
        points: prices.map((p, i) => ({ startMs: nowHour + i * H, price: p })),
      },
    },
    deltas: [],
    fees: { gridFeePerKwh: 0, taxPerKwh: 0 },
  });
  const p = plan(
    {
      slots,
      timezone: 'Europe/Oslo',
      currency: 'NOK',
      ev: null,
      location: { limitKw: 17, baseLoadKw: 0 },
      tank: { volumeL: 200, powerKw: 2, coldWaterC: 8, ambientC: 18, heatLossWPerK: 1.6, minC: 45, maxC: 75, currentTempC: 50, control: 'relay' },
    },
    nowHour,
  );
  const store = openStore({ path: db });
  try {
    store.savePlan({ createdAtMs: nowHour, horizonStartMs: p.startMs, horizonEndMs: p.endMs, json: p });
    store.saveEvent({
      eventId: 'ev-old',
      payloadType: 'PriceCurve',
      createdAtMs: nowHour - 3 * H,
      receivedAtMs: nowHour - 3 * H,
      rawJson: '{}',
      state: 'done',
    });
    store.saveEvent({
      eventId: 'ev-new',
      payloadType: 'ResourceLPC',
      createdAtMs: nowHour - H,
      receivedAtMs: nowHour - H,
      rawJson: '{}',
      state: 'active',
    });
    const { report } = store.enqueueReport({
      idempotencyKey: 'ev-old:usage',
      eventId: 'ev-old',
      kind: 'usage',
      body: {},
      nowMs: nowHour - 2 * H,
      deadlineMs: nowHour + 100 * H,
    });
    store.markSending(report.id, nowHour - 2 * H);
    store.markRejected(report.id, 'points do not match the event', nowHour - 2 * H);
    // As the daemon keeps it (src/jobs/home-tracker.ts); newer than any register check.
    store.setState('eligibility', { eligible: true, enrolled: false, checkedMs: nowHour - H });
  } finally {
    store.close();
  }
  return { nowHour };
}

describe('wattshift register', () => {
  it('registers at the sandbox, then a second run changes nothing', async () => {
    const { file } = configFile();
    const first = await wattshift(['register', '--config', file]);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('registered at ');
    expect(first.stdout).toMatch(/created user cli-user-\d+/);
    expect(first.stdout).toMatch(/created resource cli-home-\d+-tank \(hotWaterTank\)/);
    expect(first.stdout).toMatch(/enrolled user cli-user-\d+/);
    expect(first.stdout).toMatch(/^enrolled {3}yes$/m);
    expect(first.stdout).toMatch(/^eligible {3}(yes|no)/m);

    const second = await wattshift(['register', '--config', file]);
    expect(second.code).toBe(0);
    expect(second.out[0]).toMatch(/^already registered at .*: nothing changed$/);
    expect(second.stdout).not.toContain('created');

    // The ids are in the database for status to show.
    const status = await wattshift(['status', '--config', file, '--json']);
    expect(status.code).toBe(0);
    const report = JSON.parse(status.stdout) as { registration: { userId: string; resources: Record<string, string> }; program: unknown };
    expect(report.registration.userId).toMatch(/^cli-user-\d+$/);
    expect(Object.keys(report.registration.resources).sort()).toEqual(['car', 'tank']);
    expect(report.program).toMatchObject({ enrolled: true, checkedBy: 'register' });
  });

  it('a meter point already at another location: the 409 says so and what to do', async () => {
    const meter = '707057500000000777';
    expect((await wattshift(['register', '--config', configFile({ meterPointIds: [meter] }).file])).code).toBe(0);
    const other = configFile({ meterPointIds: [meter] });
    const r = await wattshift(['register', '--config', other.file]);
    expect(r.code).toBe(1);
    expect(r.err[0]).toMatch(/^wattshift: API_CONFLICT: createLocation: POST \/users\/cli-user-\d+\/locations answered 409: /);
    expect(r.err[0]).toMatch(
      /location cli-home-\d+ already exists under another user, or one of its meter point ids \(707057500000000777\) is registered at another location/,
    );
    expect(r.err[0]).toContain('spark.locationId');
    expect(r.err[0]).toContain('spark.meterPointIds');
  });

  it('wrong credentials: AUTH_REJECTED, exit 78', async () => {
    const { file } = configFile({ secret: 'not-the-secret' });
    const r = await wattshift(['register', '--config', file]);
    expect(r.code).toBe(78);
    expect(r.err[0]).toMatch(/^wattshift: AUTH_REJECTED: /);
  });

  it('API not reachable: exit 1 with the URL', async () => {
    const { file } = configFile({ sparkBase: `http://127.0.0.1:${deadPort}` });
    const r = await wattshift(['register', '--config', file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/API_UNAVAILABLE|not reachable/);
  }, 60_000);

  it('--config is required (exit 2)', async () => {
    const r = await wattshift(['register']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--config FILE is required');
  });
});

describe('wattshift status and plan', () => {
  it('on a fresh database: not registered, no plan; --json parses', async () => {
    const { file, db } = configFile();
    openStore({ path: db }).close();
    const text = await wattshift(['status', '--config', file]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('Registration: not registered');
    expect(text.stdout).toContain('Events: 0');
    expect(text.stdout).toContain('Outbox: pending 0, sending 0, accepted 0, rejected 0');
    expect(text.stdout).toContain('Plan: none stored yet');
    expect(text.stdout).toContain('status server disabled');
    const json = await wattshift(['status', '--config', file, '--json']);
    expect(json.out).toHaveLength(1);
    const r = JSON.parse(json.stdout) as Record<string, unknown>;
    expect(r).toMatchObject({
      registration: null,
      plan: null,
      events: { total: 0, last: null },
      outbox: { pending: 0, rejected: 0, lastErrors: [] },
    });

    const p = await wattshift(['plan', '--config', file]);
    expect(p.code).toBe(0);
    expect(p.stdout).toContain('No plan stored yet');
    const pj = await wattshift(['plan', '--config', file, '--json']);
    expect(JSON.parse(pj.stdout)).toEqual({ plan: null });
  });

  it('without a database: exit 1, and nothing is created', async () => {
    const { file, db } = configFile();
    const r = await wattshift(['status', '--config', file]);
    expect(r.code).toBe(1);
    expect(r.err[0]).toMatch(/^wattshift: STORE_OPEN_FAILED: .*does not exist/);
    const p = await wattshift(['plan', '--config', file]);
    expect(p.code).toBe(1);
    expect(existsSync(db)).toBe(false);
  });

  it('with a stored plan, events and a rejected report', async () => {
    const { file, db } = configFile();
    const { nowHour } = seedStore(db);
    const r = await wattshift(['status', '--config', file, '--json']);
    expect(r.code).toBe(0);
    const s = JSON.parse(r.stdout) as {
      events: { total: number; byState: Record<string, number>; last: { eventId: string; type: string } };
      outbox: { rejected: number; lastErrors: { error: string }[] };
      program: unknown;
      plan: { mode: string; stale: boolean; current: { startMs: number; reason: string; devices: Record<string, { on: boolean }> } };
    };
    expect(s.events.total).toBe(2);
    expect(s.events.byState).toMatchObject({ done: 1, active: 1 });
    expect(s.events.last).toMatchObject({ eventId: 'ev-new', type: 'ResourceLPC' });
    expect(s.outbox.rejected).toBe(1);
    expect(s.outbox.lastErrors[0]!.error).toBe('points do not match the event');
    expect(s.program).toEqual({ eligible: true, enrolled: false, checkedMs: nowHour - H, error: null, checkedBy: 'daemon' });
    expect(s.plan.mode).toBe('optimal');
    expect(s.plan.stale).toBe(false);
    expect(s.plan.current.startMs).toBe(nowHour);
    expect(s.plan.current.reason.length).toBeGreaterThan(0);
    expect(Object.keys(s.plan.current.devices)).toEqual(['tank']);

    const text = await wattshift(['status', '--config', file]);
    expect(text.stdout).toContain('Events: 2 (active 1, done 1)');
    expect(text.stdout).toMatch(/last: Power limit on a device, received .*, active/);
    expect(text.stdout).not.toContain('ev-new'); // the id is in --json
    expect(text.stdout).toContain('rejected usage report of ev-old (1 attempt): points do not match the event');
    expect(text.stdout).toMatch(
      /Plan: optimal, made .*, stored copy from the database, shown because the daemon is not reachable at http:\/\/127\.0\.0\.1:\d+ \(status server disabled/,
    );
    expect(text.stdout).toMatch(/eligible yes, enrolled no \(checked by the daemon /);
    expect(text.stdout).toMatch(/ {2}Hot water: (on 2\.0 kW|off)/);
    expect(text.stdout).toMatch(/ {2}why: \S/);

    const p = await wattshift(['plan', '--config', file, '--explain']);
    expect(p.code).toBe(0);
    expect(p.out[0]).toMatch(/^Stored copy from the database, made .* \(\d+ min ago\), optimal plan$/);
    expect(p.out[1]).toContain('shown because the daemon is not reachable');
    expect(p.stdout).toMatch(/^Hot water +[█▌·]+ +\d+ slots?$/m);
    expect(p.stdout).toContain('Why each slot:');
    const whyLines = p.out.slice(p.out.indexOf('Why each slot:') + 1);
    expect(whyLines).toHaveLength(24);
    expect(whyLines[0]).toMatch(/Hot water (ON 2\.0 kW|off)/);

    const short = await wattshift(['plan', '--config', file]);
    expect(short.stdout).not.toContain('Why each slot:');
    const pj = JSON.parse((await wattshift(['plan', '--config', file, '--json'])).stdout) as { plan: { slots: unknown[] } };
    expect(pj.plan.slots).toHaveLength(24);
  });

  it('status does not disturb a report in flight (read-only open)', async () => {
    const { file, db } = configFile();
    seedStore(db);
    const store = openStore({ path: db });
    const { report } = store.enqueueReport({ idempotencyKey: 'ev-new:ack', eventId: 'ev-new', kind: 'lpcAck', body: {}, nowMs: Date.now() });
    store.markSending(report.id, Date.now());
    try {
      const r = await wattshift(['status', '--config', file, '--json']);
      expect((JSON.parse(r.stdout) as { outbox: { sending: number } }).outbox.sending).toBe(1);
      expect(store.getReport(report.id)!.state).toBe('sending');
    } finally {
      store.close();
    }
  });

  it("plan and status show the running daemon's plan, not the older stored copy; the copy only when it does not answer", async () => {
    const nowHour = Math.floor(Date.now() / H) * H;
    const view = sampleView(Date.now());
    const live = view.plan!;
    // The daemon's plan: 5 min old, its slots moved to now, a price the stored plan never has.
    view.plan = {
      ...live,
      createdMs: Date.now() - 5 * 60_000,
      slots: live.slots.map((s) => ({ ...s, startMs: s.startMs - t0 + nowHour, pricePerKwh: s.pricePerKwh + 10 })),
    };
    const server: StatusServer = await startStatusServer({
      port: 0,
      getView: () => ({ ...view, nowMs: Date.now() }),
      metrics: new DaemonMetrics({ version: 'test', processMetrics: false }),
    });
    try {
      const { file, db } = configFile({ http: { enabled: true, host: '127.0.0.1', port: server.port } });
      seedStore(db);
      const s = JSON.parse((await wattshift(['status', '--config', file, '--json'])).stdout) as {
        plan: { origin: string; ageMinutes: number; current: { pricePerKwh: number } };
      };
      expect(s.plan.origin).toBe('daemon');
      expect(s.plan.ageMinutes).toBe(5);
      expect(s.plan.current.pricePerKwh).toBe(view.plan.slots[0]!.pricePerKwh);
      const text = await wattshift(['status', '--config', file]);
      expect(text.stdout).toMatch(/Plan: optimal, made .* \(5 min ago\), live from the daemon/);
      const p = await wattshift(['plan', '--config', file]);
      expect(p.out[0]).toMatch(/^Live plan from the running daemon, made .* \(5 min ago\), optimal plan$/);
      const pj = JSON.parse((await wattshift(['plan', '--config', file, '--json'])).stdout) as {
        origin: string;
        plan: { slots: { pricePerKwh: number }[] };
      };
      expect(pj.origin).toBe('daemon');
      expect(pj.plan.slots[0]!.pricePerKwh).toBe(view.plan.slots[0]!.pricePerKwh);
    } finally {
      await server.close();
    }
    const { file, db } = configFile({ http: { enabled: true, host: '127.0.0.1', port: deadPort } });
    seedStore(db);
    const pj = JSON.parse((await wattshift(['plan', '--config', file, '--json'])).stdout) as {
      origin: string;
      fallbackReason: string;
      plan: { slots: { pricePerKwh: number }[] };
    };
    expect(pj.origin).toBe('database');
    expect(pj.fallbackReason).toBe(`the daemon is not reachable at http://127.0.0.1:${deadPort} (ECONNREFUSED)`);
    expect(pj.plan.slots[0]!.pricePerKwh).toBeLessThan(10);
  });

  it('shows device and job health from a running daemon, or says it is not reachable', async () => {
    const view = sampleView(Date.now());
    view.health = {
      ok: false,
      jobs: [
        { name: 'event-sync', ok: false, lastError: { code: 'API_UNAVAILABLE', message: 'connect ECONNREFUSED', atMs: Date.now() } },
        { name: 'control', ok: true },
      ],
    };
    view.devices[0]!.available = false;
    const server: StatusServer = await startStatusServer({
      port: 0,
      getView: () => view,
      metrics: new DaemonMetrics({ version: 'test', processMetrics: false }),
    });
    try {
      const { file, db } = configFile({ http: { enabled: true, host: '127.0.0.1', port: server.port } });
      openStore({ path: db }).close();
      const r = await wattshift(['status', '--config', file]);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(`Daemon: running at http://127.0.0.1:${server.port}, FAILING`);
      expect(r.stdout).toMatch(/job event-sync: failing \(last error API_UNAVAILABLE at .*: connect ECONNREFUSED\)/);
      expect(r.stdout).toContain('job control: ok');
      expect(r.stdout).toContain('device Hot water (tank): DOWN, mode auto, planned off, 52.3 °C, 0 W, 1234.57 kWh');
      expect(r.stdout).toContain('device Garage charger (ev): available');
      expect(r.stdout).toMatch(/coming limit: Hot water at most 0\.0 kW, \d{4}-\d\d-\d\d \d\d:\d\d → [\d:-]+( \d\d:\d\d)?$/m);
      expect(r.stdout).toMatch(/^ {2}event: Price incentive: \d{4}-/m);
      expect(r.stdout).toMatch(/^ {2}event: Power limit on a device: \d{4}-/m);
      // Events are told by what they are; their ids are for --json.
      for (const id of ['pc-1', 'lpc-1', 'lpc-2']) expect(r.stdout).not.toContain(id);
      const j = JSON.parse((await wattshift(['status', '--config', file, '--json'])).stdout) as {
        daemon: { reachable: boolean; view: { devices: unknown[]; events: { id: string }[] } };
      };
      expect(j.daemon.reachable).toBe(true);
      expect(j.daemon.view.devices).toHaveLength(3);
      expect(j.daemon.view.events.map((e) => e.id)).toEqual(['lpc-1', 'pc-1', 'lpc-2']);
    } finally {
      await server.close();
    }
    const { file, db } = configFile({ http: { enabled: true, host: '127.0.0.1', port: deadPort } });
    openStore({ path: db }).close();
    const r = await wattshift(['status', '--config', file]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Daemon: not reachable at http://127.0.0.1:${deadPort} (ECONNREFUSED)`);
  });
});

describe('queryDaemon', () => {
  it('gives up after its timeout when the daemon accepts but does not answer', async () => {
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
      expect(await queryDaemon(url, 200)).toEqual({ url, reachable: false, error: 'no answer within 200 ms' });
    } finally {
      silent.closeAllConnections();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it('says so when the answer is not a wattshift view', async () => {
    const other = createServer((_req, res) => res.end(JSON.stringify({ hello: 'world' })));
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
      expect(await queryDaemon(url)).toEqual({ url, reachable: false, error: 'the answer is not a wattshift view' });
    } finally {
      await new Promise<void>((resolve) => other.close(() => resolve()));
    }
  });
});

describe('wattshift probe', () => {
  it('reads the simulated Modbus tank: temperature, energy, power, relay', async () => {
    const { file } = configFile();
    const r = await wattshift(['probe', '--config', file, 'tank']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const truth = tank.state();
    expect(r.out[0]).toBe('Hot water (tank, hotWaterTank)');
    expect(r.stdout).toContain('modbus sim unit 1 (wattshift-sim-tank) as switch, meter, thermometer');
    const value = (name: string): string =>
      r.out
        .find((l) => l.trim().startsWith(`${name} `))!
        .trim()
        .slice(name.length)
        .trim();
    expect(value('temperatureC')).toBe(`${Math.round(truth.tempC * 10) / 10} °C`);
    expect(Number.parseFloat(value('energyKwh'))).toBeCloseTo(truth.counterKwh, 3);
    expect(value('energyKwh')).toMatch(/ kWh$/);
    expect(value('powerW')).toMatch(/^-?\d+(\.\d+)? W$/);
    expect(value('relay')).toBe(String(truth.blocked));
  });

  it('reads the go-e charger over MQTT', async () => {
    const { file } = configFile();
    const r = await wattshift(['probe', '--config', file, 'car']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('goe go-eCharger/cli01 as charger');
    expect(r.stdout).toMatch(/energy +-?\d+(\.\d+)? kWh/);
    expect(r.stdout).toMatch(/power +-?\d+(\.\d+)? W/);
    expect(r.stdout).toMatch(/ev state +plugged (yes|no), charging (yes|no)/);
    expect(r.stdout).toMatch(/current limit +present \(write only/);
  });

  it('a device that does not answer: each value shows its error code, exit 1', async () => {
    const { file } = configFile();
    const r = await wattshift(['probe', '--config', file, 'gone']);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/energyKwh +error DEVICE_(UNREACHABLE|TIMEOUT): /);
    expect(r.stderr).toContain('nothing could be read from gone');
  });

  it('an unknown device lists the ids, exit 78; no device is exit 2', async () => {
    const { file } = configFile();
    const r = await wattshift(['probe', '--config', file, 'boiler']);
    expect(r.code).toBe(78);
    expect(r.err[0]).toBe('wattshift: CONFIG_INVALID: unknown device "boiler" (devices in the config: tank, car, gone)');
    expect((await wattshift(['probe', '--config', file])).code).toBe(2);
  });
});

describe('wattshift sandbox', () => {
  it('serves until SIGTERM', async () => {
    const signals = new EventEmitter();
    const out: string[] = [];
    let ready: () => void = () => undefined;
    const banner = new Promise<void>((resolve) => (ready = resolve));
    const running = runCli(['sandbox', '--port', '0', '--seed', '3'], {
      stdout: (l) => {
        out.push(l);
        if (l.startsWith('Press Ctrl+C')) ready();
      },
      stderr: (l) => out.push(`stderr: ${l}`),
      env: {},
      signals: signals as never,
    });
    await banner;
    const base = /Energy Coordination API: (\S+)/.exec(out.join('\n'))![1]!;
    // It really serves: the token endpoint answers (400/401 for a bare request, not a network error).
    const res = await fetch(base.replace('/energy-coordination/v1', '/connect/token'), { method: 'POST' });
    expect(res.status).toBeGreaterThanOrEqual(400);
    signals.emit('SIGTERM');
    expect(await running).toBe(0);
    expect(base).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/energy-coordination\/v1$/);
    expect(out).toContain('  client_id=wattshift-local client_secret=local-secret');
    expect(out.at(-1)).toBe('sandbox stopped');
    expect(signals.listenerCount('SIGTERM')).toBe(0);
    await expect(fetch(base)).rejects.toThrow();
  });

  it('a bad option value is a usage error', async () => {
    const r = await wattshift(['sandbox', '--port', 'eighty']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--port must be a number');
  });
});

describe('wattshift demo', () => {
  it('rejects bad options with exit 2', async () => {
    expect((await wattshift(['demo', '--hours', '0'])).code).toBe(2);
    expect((await wattshift(['demo', '--speed', 'fast'])).code).toBe(2);
  });

  it('spawned: a short demo exits 0, ends with the summary as JSON and leaves no temp folder behind', async () => {
    const tmp = tempDir('wattshift-demo-');
    const run = start(['demo', '--hours', '3', '--speed', '2400'], { TMPDIR: tmp });
    const r = await run.done;
    expect(readdirSync(tmp).filter((n) => n.startsWith('wattshift-'))).toEqual([]); // (tsx keeps its cache here)
    expect(r.stdout).toMatch(/^ {2}to pay .* for the devices' energy, after .* of incentive earned was taken off$/m);
    // The log is named only where it stays; here it goes with the temp folder.
    expect(r.stdout).toMatch(/^wattshift demo: .*; its log and database are removed at the end \(--keep-data keeps them\)$/m);
    expect(r.stdout).toMatch(/^Each hour: .* its Δ, the incentive of the programme's price events$/m);
    expect(r.stdout).toMatch(/^ {2}saved .* against no shifting \(which would have cost .*\)$/m);
    // The simulated main meter (house, tank and car) gives the daemon its own month bill: 11:00 is closed and priced by 13:00.
    expect(r.stdout).toMatch(
      /^Bill at the main meter \(the daemon's own figures, for the whole home: [^\n]*\):\n {2}\d{4}-\d{2} so far: [\d.]+ NOK for [\d.]+ kWh \(\d+ hours priced/m,
    );
    expect(r.stdout).toMatch(/^ {2}saved -?[\d.]+ NOK against no shifting, which would have cost [\d.]+ NOK/m);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    const summary = JSON.parse(lines.at(-1)!) as Record<string, unknown>;
    expect(Object.keys(summary).sort()).toEqual([
      'capViolations',
      'costActual',
      'costBaseline',
      'floorViolations',
      'incentiveEarned',
      'kwhShifted',
      'reportsAccepted',
      'reportsRejected',
    ]);
    for (const v of Object.values(summary)) expect(typeof v).toBe('number');
    expect(r.stdout).toContain('Summary over 3 simulated hours');
    expect(r.stdout).toMatch(/registered: /);
  }, 120_000);

  it('--keep-data keeps the database and log, and says where', async () => {
    const tmp = tempDir('wattshift-demo-keep-');
    const run = start(['demo', '--hours', '1', '--speed', '3600', '--keep-data'], { TMPDIR: tmp });
    const r = await run.done;
    expect(r.code).toBe(0);
    const [kept] = readdirSync(tmp).filter((n) => n.startsWith('wattshift-'));
    expect(kept).toMatch(/^wattshift-demo-/);
    expect(readdirSync(join(tmp, kept!)).sort()).toEqual(expect.arrayContaining(['wattshift.db', 'wattshift.log']));
    expect(r.stdout).toContain(`(database and log kept in ${join(tmp, kept!)})`);
  }, 120_000);
});
