/**
 * Fleet benchmark: one hub instance (the built `wattshift hub`, a child process) on PostgreSQL and
 * Mosquitto (per-gateway users and ACLs), the sandbox API, and N light gateways (MQTT clients in
 * child processes, see lib/fleet-swarm.ts). For each size, price-curve events targeting all N
 * locations are created in the sandbox, which delivers them to the hub's webhook; each gateway
 * notes when the event reaches it. Measured per event: the delay from the webhook call's arrival
 * at the hub to the event's arrival at each gateway (p50, p99, max); hub RSS and CPU; and the API
 * calls the hub made, by route, while it ran. Prints each size, then a summary; the last line is
 * one JSON object. Needs `npm run build` (the script `bench:fleet` runs it first).
 *
 *   npx tsx scripts/bench-fleet.ts [--gateways 1000,5000,10000] [--events 5] [--quick]
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { benchAreas, startFleetBenchWorld, type FleetBenchWorld } from './lib/fleet-bench-world.js';
import { sampleProc } from './lib/proc-sample.js';

const { values } = parseArgs({ options: { gateways: { type: 'string' }, events: { type: 'string' }, quick: { type: 'boolean', default: false } } });
const sizes = (values.gateways ?? (values.quick ? '300' : '1000,5000,10000')).split(',').map(Number);
const eventsPerSize = Number(values.events ?? (values.quick ? 3 : 5));
if (sizes.some((n) => !Number.isInteger(n) || n < 1) || !(eventsPerSize >= 1)) throw new Error('--gateways takes whole numbers, --events at least 1');
/** The target on this machine: p99 from webhook arrival to delivery, at every size. */
const targetP99Ms = 2000;
const deliveryTimeoutMs = 60_000;
/** How long the hub's API calls are counted (poll every 10 s, advice every minute). */
const apiWindowMs = 75_000;

const wallMs = (): number => performance.timeOrigin + performance.now();
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const quantile = (sorted: readonly number[], q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
const median = (xs: readonly number[]): number =>
  quantile(
    [...xs].sort((a, b) => a - b),
    0.5,
  );
const round = (x: number, digits = 1): number => Math.round(x * 10 ** digits) / 10 ** digits;
const mb = (bytes: number): number => round(bytes / 1048576);

let current: FleetBenchWorld | undefined;
let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  // `on`, not `once`: tsx passes the terminal's Ctrl-C on again, and a second signal must not end
  // the process half-way through its cleanup.
  process.on(signal, () => {
    if (interrupted) return;
    interrupted = true;
    console.error(`${signal}: cleaning up`);
    void (current?.stop() ?? Promise.resolve()).finally(() => process.exit(130));
  });
}

/** A day of hourly incentive deltas from the next UTC midnight. */
function priceCurveDelta(): { currency: 'NOK'; energyUnit: 'kWh'; resolution: string; points: { price: number; timestamp: string }[] } {
  const start = Math.ceil(Date.now() / 86_400_000) * 86_400_000;
  return {
    currency: 'NOK',
    energyUnit: 'kWh',
    resolution: '01:00:00',
    points: Array.from({ length: 24 }, (_, h) => ({ price: round(Math.sin(h) / 2, 2), timestamp: new Date(start + h * 3_600_000).toISOString() })),
  };
}

interface EventFigures {
  firstMs: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  delivered: number;
  hubCpuMs: number;
  brokerCpuMs: number;
}

async function oneEvent(world: FleetBenchWorld, hubPid: number): Promise<EventFigures> {
  const brokerCpuBefore = sampleProc(world.broker.pid)?.cpuMs ?? Number.NaN;
  const n = world.homes.length;
  const postsBefore = world.webhookArrivals.length;
  const cpuBefore = sampleProc(hubPid)?.cpuMs ?? Number.NaN;
  const event = await world.spark.simulatePriceCurve({
    priceArea: 'NO1',
    targets: world.homes.map((h) => ({ resourceId: h.resourceId, locationId: h.locationId })),
    priceCurveDelta: priceCurveDelta(),
  });
  const deadline = wallMs() + deliveryTimeoutMs;
  let arrivals: number[] = [];
  for (;;) {
    const replies = await Promise.all(world.swarms.map((s) => s.request({ type: 'collect', eventId: event.id }, 'arrivals')));
    arrivals = replies.flatMap((r) => (r.type === 'arrivals' ? r.atMs : []));
    if (arrivals.length >= n || wallMs() > deadline) break;
    await sleep(200);
  }
  await world.sandbox.engine.settle();
  const receivedAt = world.webhookArrivals[postsBefore];
  if (receivedAt === undefined) throw new Error(`event ${event.id}: the hub's webhook was never called`);
  const cpuAfter = sampleProc(hubPid)?.cpuMs ?? Number.NaN;
  const brokerCpuAfter = sampleProc(world.broker.pid)?.cpuMs ?? Number.NaN;
  // A gateway the event never reached counts at the timeout: it is in the tail, not left out.
  const latencies = [
    ...arrivals.map((at) => at - receivedAt),
    ...Array.from({ length: Math.max(0, n - arrivals.length) }, () => deliveryTimeoutMs),
  ].sort((a, b) => a - b);
  return {
    firstMs: latencies[0] ?? Number.NaN,
    p50Ms: quantile(latencies, 0.5),
    p99Ms: quantile(latencies, 0.99),
    maxMs: latencies.at(-1) ?? Number.NaN,
    delivered: arrivals.length,
    hubCpuMs: cpuAfter - cpuBefore,
    brokerCpuMs: brokerCpuAfter - brokerCpuBefore,
  };
}

async function runSize(n: number) {
  const world = await startFleetBenchWorld(n);
  current = world;
  try {
    const hubPid = world.hub.pid;
    const startedMs = wallMs();
    await sleep(3_000);
    const idleBefore = sampleProc(hubPid);
    await sleep(10_000);
    const idleAfter = sampleProc(hubPid);
    const idleCpuPct = idleBefore && idleAfter ? (100 * (idleAfter.cpuMs - idleBefore.cpuMs)) / (idleAfter.atMs - idleBefore.atMs) : Number.NaN;
    const events: EventFigures[] = [];
    for (let i = 0; i < eventsPerSize && !interrupted; i++) {
      const e = await oneEvent(world, hubPid);
      events.push(e);
      console.log(
        `  ${n} gateways, event ${i + 1}: delivered ${e.delivered}/${n}, first ${e.firstMs.toFixed(0)} ms, p50 ${e.p50Ms.toFixed(0)} ms, p99 ${e.p99Ms.toFixed(0)} ms, max ${e.maxMs.toFixed(0)} ms, hub CPU ${e.hubCpuMs.toFixed(0)} ms, broker CPU ${e.brokerCpuMs.toFixed(0)} ms`,
      );
      await sleep(1_000);
    }
    // At least one advice round after the start's, and several polls, in the API window.
    while (!interrupted && wallMs() - startedMs < apiWindowMs) await sleep(500);
    const hubRss = sampleProc(hubPid)?.rssBytes ?? Number.NaN;
    const brokerRss = sampleProc(world.broker.pid)?.rssBytes ?? Number.NaN;
    const dbBytes = Number((await world.pool.query<{ size: string }>('SELECT pg_database_size(current_database()) AS size')).rows[0]?.size);
    const windowS = (wallMs() - startedMs) / 1000;
    // The hub's own complaints (code and message of its warn and error lines), to tell a slow run from a failing one.
    const hubCodes = [
      ...new Set(
        readFileSync(world.hubLogPath, 'utf8')
          .split('\n')
          .flatMap((l) => {
            try {
              const line = JSON.parse(l) as { level?: number | string; code?: string; msg?: string };
              const serious = typeof line.level === 'number' ? line.level >= 40 : ['warn', 'error', 'fatal'].includes(line.level ?? '');
              return serious ? [`${line.code ?? 'no code'}: ${line.msg ?? ''}`] : [];
            } catch {
              return [];
            }
          }),
      ),
    ];
    const calls = Object.fromEntries([...world.apiCalls.entries()].sort(([a], [b]) => a.localeCompare(b)));
    const figures = {
      gateways: n,
      p50Ms: round(median(events.map((e) => e.p50Ms))),
      p99Ms: round(median(events.map((e) => e.p99Ms))),
      maxMs: round(median(events.map((e) => e.maxMs))),
      undelivered: events.reduce((s, e) => s + (n - e.delivered), 0),
      hubIdleRssMb: mb(idleAfter?.rssBytes ?? Number.NaN),
      hubRssMb: mb(hubRss),
      hubIdleCpuPct: round(idleCpuPct, 2),
      hubCpuMsPerEventPer1000: round(median(events.map((e) => e.hubCpuMs)) / (n / 1000)),
      brokerRssMb: mb(brokerRss),
      brokerCpuMsPerEventPer1000: round(median(events.map((e) => e.brokerCpuMs)) / (n / 1000)),
      dbMb: mb(dbBytes),
      provisionS: round(world.provisionMs / 1000),
      connectS: round(world.connectMs / 1000),
      hubWarnings: world.hub.levels().get('warn') ?? 0,
      hubErrors: world.hub.levels().get('error') ?? 0,
      hubCodes,
      apiWindowS: round(windowS),
      apiCalls: calls,
      apiCallsPerHour: Math.round((Object.values(calls).reduce((s, c) => s + c, 0) * 3600) / windowS),
    };
    console.log(
      `${n} gateways: p50 ${figures.p50Ms} ms, p99 ${figures.p99Ms} ms, max ${figures.maxMs} ms (median of ${events.length} events), undelivered ${figures.undelivered}; hub RSS ${figures.hubIdleRssMb} MB idle, ${figures.hubRssMb} MB after the events, idle CPU ${figures.hubIdleCpuPct} %, ${figures.hubCpuMsPerEventPer1000} ms CPU per event per 1,000 gateways; broker RSS ${figures.brokerRssMb} MB, ${figures.brokerCpuMsPerEventPer1000} ms CPU per event per 1,000 gateways; database ${figures.dbMb} MB`,
    );
    console.log(`  hub log: ${figures.hubWarnings} warn, ${figures.hubErrors} error lines${hubCodes.length ? ` (${hubCodes.join('; ')})` : ''}`);
    console.log(
      `  API calls in ${figures.apiWindowS} s (poll every 10 s, advice every minute, ${benchAreas.length} price areas): ${JSON.stringify(calls)}`,
    );
    return figures;
  } finally {
    current = undefined;
    await world.stop();
  }
}

const results = [];
for (const n of sizes) {
  if (interrupted) break;
  results.push(await runSize(n));
}
const largest = results.at(-1);
const smallest = results[0];
// From idle RSS: after events it mostly shows when the collector last ran.
const rssPer1000 =
  results.length > 1 && largest && smallest
    ? round(((largest.hubIdleRssMb - smallest.hubIdleRssMb) * 1000) / (largest.gateways - smallest.gateways), 2)
    : undefined;
console.log(
  `summary: p99 ${results.map((r) => `${r.p99Ms} ms at ${r.gateways}`).join(', ')} (target ≤ ${targetP99Ms} ms); hub RSS idle ${results.map((r) => `${r.hubIdleRssMb} MB`).join(', ')}${rssPer1000 === undefined ? '' : ` (+${rssPer1000} MB per 1,000 gateways)`}; API calls per hour at the bench schedule ${results.map((r) => r.apiCallsPerHour).join(', ')}`,
);
console.log(
  JSON.stringify({
    fleetTargetP99Ms: targetP99Ms,
    fleetP99MetAll: results.every((r) => r.p99Ms <= targetP99Ms && r.undelivered === 0),
    hubRssMbPer1000: rssPer1000,
    sizes: results,
  }),
);
