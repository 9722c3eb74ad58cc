/**
 * Fleet faults end to end: two real daemons in fleet mode (own processes, only their broker
 * logins), two hub instances on one PostgreSQL, Mosquitto with per-gateway ACLs and the sandbox
 * API whose webhook calls the hub (test/faults/fleet-e2e-world.ts). Each scenario counts what the
 * API accepted: every report a daemon made arrives once, none twice.
 */
import { afterAll, expect, it } from 'vitest';
import type { SparkEvent } from '../../src/spark/wire.js';
import type { Hub } from '../../src/hub/hub.js';
import { sampleTruth, stopAll, type DaemonLogLine } from '../helpers/daemon-harness.js';
import { logsWith, wallSeconds } from './common.js';
import { startFleetE2e, until, type FleetE2e, type FleetHome } from './fleet-e2e-world.js';

afterAll(stopAll, 30_000);

const received = (home: FleetHome, eventId: string) => (l: DaemonLogLine): boolean => l.msg === 'event received' && l['eventId'] === eventId;
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
    targets: homes.flatMap((h) => [{ resourceId: h.resources.tank, locationId: h.locationId }, { resourceId: h.resources.car, locationId: h.locationId }]),
    priceCurveDelta: { points: hoursMs.map((t, i) => ({ timestamp: new Date(t).toISOString(), price: deltas[i] ?? 0 })), currency: 'NOK', energyUnit: 'kWh', resolution: '01:00:00' },
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
  const acceptedOf = (home: FleetHome): string[] => fleet.accepted().filter((r) => r.home === home.key).map((r) => `${r.eventId}:${r.kind}`).sort();
  const complete = (): boolean => homes.every((h) => queuedBy(h).every((k) => acceptedOf(h).includes(k)));
  await until(async () => (complete() && (await pendingAtHub(fleet)) === 0 ? true : undefined),
    () => `every queued report accepted: ${JSON.stringify(homes.map((h) => ({ queued: queuedBy(h), accepted: acceptedOf(h) })))}`, 90_000);
  await new Promise((r) => setTimeout(r, 3000));
  for (const h of homes) expect(acceptedOf(h), `reports of home ${h.key}`).toEqual(queuedBy(h));
  expect(fleet.accepted().filter((r) => r.home === '?')).toEqual([]);
}

async function pendingAtHub(fleet: FleetE2e): Promise<number> {
  const { rows } = await fleet.pool.query<{ n: string }>("SELECT count(*) AS n FROM report_outbox WHERE state <> 'accepted'");
  return Number(rows[0]!.n);
}

it('a broker restart: both homes get the events sent while it was down, every report reaches the API once, health recovers', async () => {
  const t0 = Date.now();
  const fleet = await startFleetE2e('fleet-broker', { speed: 600 });
  try {
    const { a, b } = fleet.homes;
    for (const home of [a, b]) await until(async () => ((await eventsFailing(home)) === null ? true : undefined), `${home.key}: events healthy at start`, 30_000);

    const truth = [a, b].map((h) => sampleTruth(h.world));

    await fleet.broker.halt();
    const downAtMs = fleet.clock.nowMs();
    for (const home of [a, b]) {
      const code = await until(async () => (await eventsFailing(home)) ?? undefined, `${home.key}: events failing`, 20_000);
      expect(code).toBe('FLEET_BROKER_DOWN');
    }
    for (const hub of fleet.hubs.values()) await until(async () => ((await hubHealth(hub)).status === 503 ? true : undefined), `${hub.instanceId}: unhealthy without the broker`, 20_000);
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

    for (const hub of fleet.hubs.values()) await until(async () => ((await hubHealth(hub)).status === 200 ? true : undefined), `${hub.instanceId}: healthy again`, 30_000);
    for (const home of [a, b]) {
      await until(async () => ((await eventsFailing(home)) === null ? true : undefined), `${home.key}: events healthy again`, 30_000);
      const daemon = home.daemons.at(-1)!;
      for (const e of [lpc, curve, after]) await daemon.waitForLog(received(home, e.id), 30_000);
      // Down once, said once; connected again on the kept session (persistent broker).
      expect(logsWith([daemon], (l) => l.code === 'FLEET_BROKER_DOWN' && l.msg?.startsWith('fleet broker connection down') === true)).toHaveLength(1);
      expect(logsWith([daemon], (l) => l.msg === 'fleet broker connected again')).toHaveLength(1);
    }
    // Both homes act on them: the plan carries the curve's deltas and keeps each tank off under the caps.
    for (const home of [a, b]) {
      const planned = await until(async () => {
        const slots = await home.planSlots();
        const inCurve = slots.filter((s) => curveHours.includes(s.startMs));
        return inCurve.length > 0 && inCurve.every((s) => s.deltaPerKwh < 0) ? slots : undefined;
      }, `${home.key}: a plan with the curve`, 30_000);
      for (const s of planned.filter((x) => lpcHours.includes(x.startMs))) expect(s.devices.tank?.powerKw ?? 0, `${home.key} tank at ${new Date(s.startMs).toISOString()}`).toBe(0);
    }
    // The acknowledgements at once; the usage reports once the events are over and metered (an
    // LPC hour without consumption has none). What the daemons queued is what the API has, once.
    await fleet.waitUntilSim(lpcHours[2]! + 2 * 3_600_000);
    await until(() => (countsOf(fleet, curve.id)['a:usage'] && countsOf(fleet, curve.id)['b:usage'] ? true : undefined), 'the curve\'s usage reports', 90_000);
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
    // The caps held: no tank drew power in a capped hour (after a stall's worth of lag at its start).
    for (const t of truth) t.stop();
    const lagMs = 0.4 * fleet.speed * 1000;
    const inCaps = truth.map((t) => t.samples.filter((x) => lpcHours.some((h) => x.atMs >= h + lagMs && x.atMs < h + 3_600_000)));
    for (const samples of inCaps) {
      expect(samples.length).toBeGreaterThan(20);
      expect(samples.filter((x) => x.tankPowerW > 0)).toEqual([]);
    }
    expect(logsWith([...a.daemons, ...b.daemons], (l) => l.level === 'error' || l.level === 'fatal')).toEqual([]);
    process.stderr.write(`fault fleet-broker: down at ${new Date(downAtMs).toISOString()}, up at ${new Date(upAtMs).toISOString()}; ${wallSeconds(t0)} s wall\n`);
  } finally {
    await fleet.close();
  }
}, 240_000);
