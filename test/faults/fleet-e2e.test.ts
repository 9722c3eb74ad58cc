/**
 * Fleet faults end to end: two real daemons in fleet mode (own processes, only their broker
 * logins), two hub instances on one PostgreSQL, Mosquitto with per-gateway ACLs and the sandbox
 * API whose webhook calls the hub (test/faults/fleet-e2e-world.ts). Each scenario counts what the
 * API accepted: every report a daemon made arrives once, none twice.
 */
import { afterAll, expect, it } from 'vitest';
import type { SparkEvent } from '../../src/spark/wire.js';
import type { Hub } from '../../src/hub/hub.js';
import { openStore } from '../../src/store/index.js';
import type { EventRow } from '../../src/store/types.js';
import { stopAll, truthByHour, type DaemonLogLine } from '../helpers/daemon-harness.js';
import { logsWith, wallSeconds } from './common.js';
import { startFleetE2e, until, type FleetE2e, type FleetHome } from './fleet-e2e-world.js';

afterAll(stopAll, 30_000);

const received =
  (home: FleetHome, eventId: string) =>
  (l: DaemonLogLine): boolean =>
    l.msg === 'event received' && l['eventId'] === eventId;
const eventsFailing = async (home: FleetHome): Promise<string | null | undefined> => {
  const h = await home.health().catch(() => undefined);
  if (!h) return undefined;
  return h.failing.find((f) => f.job === 'events')?.error?.code ?? null;
};

const hubHealth = async (hub: Hub): Promise<{ status: number }> => {
  const res = await fetch(new URL('/healthz', hub.webhookUrl));
  await res.body?.cancel();
  return { status: res.status };
};

/** Hot water drawn from the home's simulated tank now (heat, kWh): room for the element to fill. */
function drawHotWater(home: FleetHome, kwh: number): void {
  home.world.env.tank.sync();
  home.world.env.tank.physics.draw(kwh);
}

/** Hot water drawn until the tank is at `tempC`, below its floor: the daemon heats it at once, whatever its plan. */
function drawTankTo(home: FleetHome, tempC: number): void {
  const tank = home.world.env.tank;
  tank.sync();
  tank.physics.draw(Math.max(0, (tank.state().tempC - tempC) * tank.physics.capacityKwhPerK));
}

/**
 * How long a wait on the daemons' or the hub's state may take before the test gives up with what
 * it saw: a guard against a hang, far above what any of these waits takes on a loaded machine.
 */
const hangGuardMs = 150_000;

/** An event as a home's running daemon has it in its store (read beside it; SQLite in WAL mode). */
function eventIn(home: FleetHome, eventId: string): EventRow | undefined {
  const store = openStore({ path: String(home.world.config.storage!.path), readOnly: true });
  try {
    return store.getEvent(eventId);
  } finally {
    store.close();
  }
}

/** A home's metered hours of `subject` starting at `hoursMs`, as its running daemon has them. */
function meteredIn(home: FleetHome, subject: string, hoursMs: readonly number[]): { hourStartMs: number; kwh: number; quality: string }[] {
  const store = openStore({ path: String(home.world.config.storage!.path), readOnly: true });
  try {
    return store.readHourly(subject, Math.min(...hoursMs), Math.max(...hoursMs) + 3_600_000).filter((r) => hoursMs.includes(r.hourStartMs));
  } finally {
    store.close();
  }
}

/**
 * Waits until a home's daemon is done with an event: its usage report queued (and maybe sent), or
 * nothing to report. Returns whether a usage report was queued.
 */
async function settledIn(home: FleetHome, eventId: string): Promise<{ usageQueued: boolean; detail: string | null }> {
  return until(
    () => {
      if (queuedBy(home).includes(`${eventId}:usage`)) return { usageQueued: true, detail: null };
      const e = eventIn(home, eventId);
      return e?.state === 'done' || e?.state === 'failed' || e?.state === 'ignored' ? { usageQueued: false, detail: e.stateDetail } : undefined;
    },
    () => `${home.key}: event ${eventId} settled (now ${JSON.stringify(eventIn(home, eventId)?.state)})`,
    hangGuardMs,
  );
}

/** A 0 kW cap on both homes' tanks for the hours starting at `hoursMs`. */
function tankLpcBoth(fleet: FleetE2e, hoursMs: number[], homes: FleetHome[] = [fleet.homes.a, fleet.homes.b]): Promise<SparkEvent> {
  return fleet.api.spark.simulateResourceLpc({
    resources: homes.map((h) => ({
      resource: { resourceId: h.resources.tank, locationId: h.locationId },
      points: hoursMs.map((t) => ({ timestamp: new Date(t).toISOString(), maxPowerInKiloWatts: 0 })),
    })),
  });
}

/** A price curve on the homes' tanks and cars for the hours starting at `hoursMs`. */
function curveFor(fleet: FleetE2e, hoursMs: number[], deltas: number[], homes: FleetHome[] = [fleet.homes.a, fleet.homes.b]): Promise<SparkEvent> {
  return fleet.api.spark.simulatePriceCurve({
    targets: homes.flatMap((h) => [
      { resourceId: h.resources.tank, locationId: h.locationId },
      { resourceId: h.resources.car, locationId: h.locationId },
    ]),
    priceCurveDelta: {
      points: hoursMs.map((t, i) => ({ timestamp: new Date(t).toISOString(), price: deltas[i] ?? 0 })),
      currency: 'NOK',
      energyUnit: 'kWh',
      resolution: '01:00:00',
    },
    priceArea: 'NO4',
  });
}

/** Accepted reports of `eventId` by home and kind. */
function countsOf(fleet: FleetE2e, eventId: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of fleet.accepted().filter((x) => x.eventId === eventId)) out[`${r.home}:${r.kind}`] = (out[`${r.home}:${r.kind}`] ?? 0) + 1;
  return out;
}

/** The reports a home's daemons queued, as `eventId:kind`. */
function queuedBy(home: FleetHome): string[] {
  const lines = logsWith(home.daemons, (l) => l.msg === 'LPC acknowledgement queued' || l.msg === 'usage report queued');
  return [...new Set(lines.map((l) => `${String(l['eventId'])}:${l.msg === 'usage report queued' ? 'usage' : 'ack'}`))].sort();
}

/**
 * Every report the daemons queued reaches the API exactly once, and nothing else does: waits until
 * the hub's outbox is settled and each queued report is accepted, then a little longer for copies.
 */
async function expectEveryReportOnce(fleet: FleetE2e): Promise<void> {
  const homes = [fleet.homes.a, fleet.homes.b];
  const acceptedOf = (home: FleetHome): string[] =>
    fleet
      .accepted()
      .filter((r) => r.home === home.key)
      .map((r) => `${r.eventId}:${r.kind}`)
      .sort();
  const complete = (): boolean => homes.every((h) => queuedBy(h).every((k) => acceptedOf(h).includes(k)));
  let hubRows: unknown[] = [];
  await until(
    async () => {
      hubRows = (
        await fleet.pool.query("SELECT gateway_id, idempotency_key, state, attempts, last_error FROM report_outbox WHERE state <> 'accepted'")
      ).rows;
      return complete() && hubRows.length === 0 ? true : undefined;
    },
    () =>
      `every queued report accepted: ${JSON.stringify(homes.map((h) => ({ queued: queuedBy(h), accepted: acceptedOf(h) })))}; hub rows not accepted: ${JSON.stringify(hubRows)}; ` +
      `hub warnings: ${JSON.stringify(fleet.hubLogs.filter((l) => l.level === 'warn' || l.level === 'error').slice(-8))}; ` +
      `daemon warnings: ${JSON.stringify(
        logsWith(
          homes.flatMap((h) => h.daemons),
          (l) => l.level === 'warn' || l.level === 'error',
        ).slice(-8),
      )}`,
    hangGuardMs,
  );
  await new Promise((r) => setTimeout(r, 3000));
  for (const h of homes) expect(acceptedOf(h), `reports of home ${h.key}`).toEqual(queuedBy(h));
  expect(fleet.accepted().filter((r) => r.home === '?')).toEqual([]);
}

it('a broker restart: both homes get the events sent while it was down, every report reaches the API once, health recovers', async () => {
  const t0 = Date.now();
  const fleet = await startFleetE2e('fleet-broker', { speed: 600 });
  try {
    const { a, b } = fleet.homes;
    for (const home of [a, b])
      await until(async () => ((await eventsFailing(home)) === null ? true : undefined), `${home.key}: events healthy at start`, hangGuardMs);

    await fleet.broker.halt();
    const downAtMs = fleet.clock.nowMs();
    for (const home of [a, b]) {
      const code = await until(async () => (await eventsFailing(home)) ?? undefined, `${home.key}: events failing`, hangGuardMs);
      expect(code).toBe('FLEET_BROKER_DOWN');
    }
    for (const hub of fleet.hubs.values())
      await until(
        async () => ((await hubHealth(hub)).status === 503 ? true : undefined),
        `${hub.instanceId}: unhealthy without the broker`,
        hangGuardMs,
      );
    // While it is down: a cap on both tanks two hours ahead, and a price curve on both homes.
    const lpcHours = [fleet.hourFromNow(2), fleet.hourFromNow(3), fleet.hourFromNow(4)];
    const lpc = await tankLpcBoth(fleet, lpcHours.slice(0, 2));
    const curveHours = [fleet.hourFromNow(1), fleet.hourFromNow(2)];
    const curve = await curveFor(fleet, curveHours, [-0.6, -0.5]);
    await new Promise((r) => setTimeout(r, 3000));
    await fleet.broker.resume();
    // Right after it is back: one more cap for both.
    const after = await tankLpcBoth(fleet, lpcHours.slice(2));
    const upAtMs = fleet.clock.nowMs();

    for (const hub of fleet.hubs.values())
      await until(async () => ((await hubHealth(hub)).status === 200 ? true : undefined), `${hub.instanceId}: healthy again`, hangGuardMs);
    for (const home of [a, b]) {
      await until(async () => ((await eventsFailing(home)) === null ? true : undefined), `${home.key}: events healthy again`, hangGuardMs);
      const daemon = home.daemons.at(-1)!;
      for (const e of [lpc, curve, after]) await daemon.waitForLog(received(home, e.id), hangGuardMs);
      // Down once, said once; connected again on the kept session (persistent broker).
      expect(logsWith([daemon], (l) => l.code === 'FLEET_BROKER_DOWN' && l.msg?.startsWith('fleet broker connection down') === true)).toHaveLength(1);
      expect(logsWith([daemon], (l) => l.msg === 'fleet broker connected again')).toHaveLength(1);
    }
    // Both homes act on them: the plan carries the curve's deltas and keeps each tank off under the
    // caps. (What the tanks drew under the caps is not checked here; see the next scenario.)
    for (const home of [a, b]) {
      const planned = await until(
        async () => {
          const slots = await home.planSlots();
          const inCurve = slots.filter((s) => curveHours.includes(s.startMs));
          return inCurve.length > 0 && inCurve.every((s) => s.deltaPerKwh < 0) ? slots : undefined;
        },
        `${home.key}: a plan with the curve`,
        hangGuardMs,
      );
      for (const s of planned.filter((x) => lpcHours.includes(x.startMs)))
        expect(s.devices.tank?.powerKw ?? 0, `${home.key} tank at ${new Date(s.startMs).toISOString()}`).toBe(0);
    }
    // Hot water drawn below the floor as the curve's first hour begins: each tank heats in it,
    // whatever it heated before the events arrived (a tank the plan filled while they were on
    // their way has nothing to heat in the curve's hours, and then no usage report to make). The
    // curve's second hour is under the first cap.
    await fleet.waitUntilSim(curveHours[0]!);
    for (const home of [a, b]) drawTankTo(home, 40);
    // The acknowledgements at once; the usage reports once the events are over and metered (an
    // LPC hour without consumption has none). What the daemons queued is what the API has, once.
    for (const home of [a, b]) {
      const curveOutcome = await settledIn(home, curve.id);
      expect(truthByHour(home.world).tank.get(curveHours[0]!) ?? 0, `${home.key}: tank in the curve's first hour`).toBeGreaterThan(0);
      expect(curveOutcome, `${home.key}: the curve's usage report`).toEqual({ usageQueued: true, detail: null });
      for (const e of [lpc, after]) await settledIn(home, e.id);
    }
    await expectEveryReportOnce(fleet);
    for (const id of [lpc.id, after.id]) expect(countsOf(fleet, id), id).toMatchObject({ 'a:ack': 1, 'b:ack': 1 });
    expect(countsOf(fleet, curve.id)).toEqual({ 'a:usage': 1, 'b:usage': 1 });
    expect(fleet.accepted().filter((r) => r.home === '?')).toEqual([]);
    // Each usage report names only its home's resources, hours of the curve only.
    for (const r of fleet.accepted().filter((x) => x.eventId === curve.id)) {
      for (const p of r.payloads) {
        expect(p.resourceId?.startsWith(`res-${r.home}-`)).toBe(true);
        for (const pt of p.points) expect(curveHours).toContain(pt.timestampMs);
      }
    }
    expect(logsWith([...a.daemons, ...b.daemons], (l) => l.level === 'error' || l.level === 'fatal')).toEqual([]);
    process.stderr.write(
      `fault fleet-broker: down at ${new Date(downAtMs).toISOString()}, up at ${new Date(upAtMs).toISOString()}; ${wallSeconds(t0)} s wall\n`,
    );
  } catch (err) {
    // Say why it failed, with its wall time, beside the other scenarios' lines.
    process.stderr.write(
      `fault fleet-broker attempt failed after ${wallSeconds(t0)} s: ${err instanceof Error ? err.message.slice(0, 2000) : String(err)}\n`,
    );
    throw err;
  } finally {
    await fleet.close();
  }
}, 240_000);

// One more run on a fresh world: the events B missed are for hours 8 to 13 after its return, and
// at 2000× its start and first plans must come within them. At load 10 (others' processes on two
// cores) the curve's hours were over before B had a plan with them.
it(
  'a gateway away for two simulated days: on its return it gets the events it missed, plans on them, and its reports go through once; the other home kept working',
  { retry: 1, timeout: 300_000 },
  async () => {
    const t0 = Date.now();
    const dayMs = 24 * 3_600_000;
    const fleet = await startFleetE2e('fleet-away', { speed: 2000 });
    try {
      const { a, b } = fleet.homes;
      for (const home of [a, b])
        await until(async () => ((await eventsFailing(home)) === null ? true : undefined), `${home.key}: events healthy at start`, hangGuardMs);

      expect(await b.stop()).toBe(0);
      const awayMs = fleet.clock.nowMs();
      const backMs = awayMs + 2 * dayMs;
      // The daemon's start takes a few wall seconds, its first plans a few more: simulated hours at
      // this speed. Its events are for hours well after that.
      const after = (h: number): number => Math.ceil((backMs + h * 3_600_000) / 3_600_000) * 3_600_000;
      const curveBothHours = [after(8), after(9)];
      const lpcBHours = [after(11), after(12)];
      const lpcBothHours = [after(13)];

      await fleet.waitUntilSim(awayMs + 3_600_000);
      const lpcB = await tankLpcBoth(fleet, lpcBHours, [b]);
      // A curve that pays for power, on a tank with room for it: a usage report is sure to follow.
      drawHotWater(a, 6);
      const curveAHours = [fleet.hourFromNow(2), fleet.hourFromNow(3)];
      const curveA = await curveFor(fleet, curveAHours, [-5, -5], [a]);
      await fleet.waitUntilSim(awayMs + dayMs);
      const lpcBoth = await tankLpcBoth(fleet, lpcBothHours);
      await fleet.waitUntilSim(awayMs + 1.5 * dayMs);
      const curveBoth = await curveFor(fleet, curveBothHours, [-5, -5]);
      // Home A goes on meanwhile: its acknowledgement and its usage report are accepted while B is away.
      await until(
        () => (countsOf(fleet, lpcBoth.id)['a:ack'] && countsOf(fleet, curveA.id)['a:usage'] ? true : undefined),
        "home A's reports while B is away",
        hangGuardMs,
      );
      for (const id of [lpcBoth.id, curveA.id]) {
        for (const r of fleet.accepted().filter((x) => x.eventId === id)) expect(r.createdAtMs).toBeLessThan(backMs);
      }
      expect(fleet.accepted().filter((r) => r.home === 'b' && r.createdAtMs >= awayMs)).toEqual([]);

      await fleet.waitUntilSim(backMs);
      const daemon = await b.start();
      // The broker kept its session: the events come from it (and from the sync asked at start).
      expect(logsWith([daemon], (l) => l.msg === 'fleet broker connected')).toMatchObject([{ newSession: false }]);
      for (const e of [lpcB, lpcBoth, curveBoth]) await daemon.waitForLog(received(b, e.id), hangGuardMs);
      expect(logsWith([daemon], (l) => l.msg === 'event received' && l['eventId'] === curveA.id)).toEqual([]);
      const planned = await until(
        async () => {
          const slots = await b.planSlots();
          const inCurve = slots.filter((s) => curveBothHours.includes(s.startMs));
          return inCurve.length > 0 && inCurve.every((s) => s.deltaPerKwh < 0) ? slots : undefined;
        },
        'B: a plan with the curve it missed',
        hangGuardMs,
      );
      // Its plan holds the caps. (The tank itself is not checked on this process: on a loaded machine
      // a stall of a fraction of a second outlasts the relay's block lease at this speed, and the
      // element may heat, fail-safe. The kernel's fault scenarios check a cap at the tank exactly.)
      for (const s of planned.filter((x) => lpcBHours.includes(x.startMs) || lpcBothHours.includes(x.startMs)))
        expect(s.devices.tank?.powerKw ?? 0).toBe(0);

      // Hot water drawn before the curve's hours, which pay for power: B's tank fills in them (and
      // is warm for the caps after them).
      await fleet.waitUntilSim(curveBothHours[0]! - 90 * 60_000);
      drawHotWater(b, 4);
      expect(await settledIn(b, curveBoth.id)).toEqual({ usageQueued: true, detail: null });
      for (const home of [a, b]) await settledIn(home, lpcBoth.id);
      await settledIn(b, lpcB.id);
      await expectEveryReportOnce(fleet);
      expect(countsOf(fleet, lpcB.id)).toMatchObject({ 'b:ack': 1 });
      expect(countsOf(fleet, lpcBoth.id)).toMatchObject({ 'a:ack': 1, 'b:ack': 1 });
      expect(countsOf(fleet, curveBoth.id)).toMatchObject({ 'b:usage': 1 });
      // B's tank drew in the curve's hours, and the report that went through the fleet says what B's
      // daemon metered in them, to the Wh. (The metering against the simulators' truth is exact on
      // the simulation kernel, test/kernel-faults; on this process a stall moves a reading's stamp.)
      const usageB = fleet.accepted().find((r) => r.eventId === curveBoth.id && r.home === 'b')!;
      const tankB = truthByHour(b.world).tank;
      const sum = (xs: number[]): number => xs.reduce((x, y) => x + y, 0);
      expect(sum(curveBothHours.map((h) => tankB.get(h) ?? 0))).toBeGreaterThan(0.5);
      const reported = usageB.payloads.find((p) => p.resourceId === b.resources.tank)?.points ?? [];
      const metered = meteredIn(b, 'device:tank', curveBothHours);
      expect(reported.map((p) => [p.timestampMs, p.kiloWattHours])).toEqual(
        metered.filter((r) => r.quality !== 'gap' && Math.round(r.kwh * 1000) > 0).map((r) => [r.hourStartMs, Math.round(r.kwh * 1000) / 1000]),
      );
      expect(logsWith([...a.daemons, ...b.daemons], (l) => l.level === 'error' || l.level === 'fatal')).toEqual([]);
      process.stderr.write(
        `fault fleet-away: B away ${new Date(awayMs).toISOString()} to ${new Date(backMs).toISOString()}; ${wallSeconds(t0)} s wall\n`,
      );
    } catch (err) {
      // Say why it failed, with its wall time, beside the other scenarios' lines.
      process.stderr.write(
        `fault fleet-away attempt failed after ${wallSeconds(t0)} s: ${err instanceof Error ? err.message.slice(0, 2000) : String(err)}\n`,
      );
      throw err;
    } finally {
      await fleet.close();
    }
  },
);

it('a hub instance killed the moment the API accepted its upload: another instance finishes, every report is at the API once', async () => {
  const t0 = Date.now();
  const fleet = await startFleetE2e('fleet-hub-kill', { speed: 1000, childHub: true });
  try {
    const { a, b } = fleet.homes;
    const child = fleet.childHub!;
    for (const home of [a, b])
      await until(async () => ((await eventsFailing(home)) === null ? true : undefined), `${home.key}: events healthy at start`, hangGuardMs);
    // A curve that pays for power on both homes, whose tanks have room: both report usage.
    for (const home of [a, b]) drawHotWater(home, 4);
    const curveHours = [fleet.hourFromNow(2), fleet.hourFromNow(3)];
    const curve = await curveFor(fleet, curveHours, [-5, -5]);
    for (const home of [a, b]) await home.daemons.at(-1)!.waitForLog(received(home, curve.id), hangGuardMs);
    // hub-1 is taken out of service (a clean stop): the usage reports go to hub-2 alone, which
    // is killed as soon as the API has accepted the first of them, before it hears so.
    await fleet.hubs.get('hub-1')!.stop();
    let killedAtMs: number | undefined;
    child.proxy.onAnswer = (req) => {
      if (
        killedAtMs === undefined &&
        req.method === 'POST' &&
        req.path.endsWith('/reports') &&
        req.status === 200 &&
        fleet.accepted().some((r) => r.eventId === curve.id)
      ) {
        killedAtMs = fleet.clock.nowMs();
        child.kill();
      }
    };
    await until(() => killedAtMs, 'hub-2 killed at an accepted usage upload', hangGuardMs);
    expect((await child.exited).signal).toBe('SIGKILL');
    const unsettled = (
      await fleet.pool.query<{ idempotency_key: string; claimed_by: string }>(
        "SELECT idempotency_key, claimed_by FROM report_outbox WHERE state = 'pending' AND idempotency_key = $1",
        [`${curve.id}:usage`],
      )
    ).rows;
    expect(unsettled.length).toBeGreaterThanOrEqual(1);

    // Another instance takes over once the dead one's claims lapse.
    await fleet.startHub('hub-3');
    await until(
      () => (countsOf(fleet, curve.id)['a:usage'] && countsOf(fleet, curve.id)['b:usage'] ? true : undefined),
      'both usage reports',
      hangGuardMs,
    );
    await expectEveryReportOnce(fleet);
    expect(countsOf(fleet, curve.id)).toEqual({ 'a:usage': 1, 'b:usage': 1 });
    // The upload hub-2 never recorded was sent again, and the API's "duplicate" settled it accepted.
    expect(
      fleet.hubLogs.some((l) => l['hub'] === 'hub-3' && l.msg === 'report was already accepted by the API (an earlier upload); settled accepted'),
    ).toBe(true);
    const rows = (await fleet.pool.query<{ state: string }>('SELECT state FROM report_outbox')).rows;
    expect(rows.filter((r) => r.state !== 'accepted')).toEqual([]);
    expect(logsWith([...a.daemons, ...b.daemons], (l) => l.level === 'error' || l.level === 'fatal')).toEqual([]);
    process.stderr.write(`fault fleet-hub-kill: killed at ${new Date(killedAtMs!).toISOString()}; ${wallSeconds(t0)} s wall\n`);
  } catch (err) {
    // Say why it failed, with its wall time, beside the other scenarios' lines.
    process.stderr.write(
      `fault fleet-hub-kill attempt failed after ${wallSeconds(t0)} s: ${err instanceof Error ? err.message.slice(0, 2000) : String(err)}\n`,
    );
    throw err;
  } finally {
    await fleet.close();
  }
}, 240_000);
