/**
 * Fault (d): SIGKILL at fifty moments across a simulated week, restarting at once each time (as
 * systemd does). Most moments are seeded-random; some are steered: a few minutes after a day's
 * events appear (intake and re-planning), and the instant the API has accepted a report but before
 * the daemon hears so (the outbox finds it interrupted and sends it again). Each day brings a price
 * curve, every other day a 0 kW LPC on the tank, so reports cross kills all week.
 * The database stays intact; no report is lost, no usage report is accepted twice (an LPC
 * acknowledgement may be, identically: the API cannot tell the daemon it already holds one); no
 * hour is counted twice: hours read in full away from restarts equal the ground truth, and around
 * restarts energy may move between hours but never exceeds what the element delivered.
 *
 * The clock runs at 3500× (the week in about three minutes). Restarts come from warm standby
 * processes; what is left of a start (config, database, connections, the first plan: a few
 * hundred CPU milliseconds) is still tens of simulated minutes without readings, so two in three
 * kills fall early in an hour, where the restart usually ends within the same hour.
 */
import { loadavg } from 'node:os';
import { afterAll, expect, it } from 'vitest';
import {
  checkReports,
  hourMs,
  localTime,
  sampleTruth,
  secretLeaks,
  stopAll,
  truthByHour,
  waitUntilSim,
  writeConfig,
  type DaemonLogLine,
  type World,
} from '../helpers/daemon-harness.js';
import { isRunningLine, simTimeOf, startRestartingDaemon, type RestartingDaemon } from '../helpers/restarting-daemon.js';
import { errorLines, faultOverrides, faultWorld, logsWith, priceCurve, readStore, tankLpc, wallSeconds } from './common.js';
import { checkHours, isComplete, pointsOffRows, reportKeys, restartsOf } from './restart-checks.js';
import { rng } from '../../src/core/prng.js';

afterAll(stopAll, 30_000);

const speed = 2500;
const days = 7;
const killCount = 50;
/** At most this many kills come from the API accepting a report (the rest are scheduled). */
const reportKills = 8;
const lpcDays = new Set([1, 3, 5]);
const minuteMs = 60_000;

interface Timed {
  atMs: number;
  run(): Promise<void> | void;
}

/** Each day at 10:15: a price curve for 12:00–22:00, and on LPC days a 0 kW cap on the tank 18:00–20:00. */
function dailyEvents(world: World, random: () => number, events: { curves: string[]; lpcs: string[] }): Timed[] {
  return Array.from({ length: days }, (_, day) => ({
    atMs: localTime(world, day, 10, 15),
    async run() {
      const hours = Array.from({ length: 10 }, (_, i) => 12 + i);
      const deltas = hours.map(() => Math.round(random() * 12 - 7) / 10);
      events.curves.push((await priceCurve(world, hours, deltas, day)).id);
      if (lpcDays.has(day)) events.lpcs.push((await tankLpc(world, [18, 19], day)).id);
    },
  }));
}

/**
 * Kill moments: a few minutes after the events of each day without an LPC appear, then seeded
 * random ones at least 45 minutes from any other and from the windows where reports go out (those
 * get their kills from the proxy, and as many moments at the end of the week go unused). Two in
 * three fall early in an hour, the others anywhere.
 */
function killMoments(world: World, random: () => number, count: number): { atMs: number; cause: string }[] {
  const intake = [0, 2, 4, 6].map((day) => ({ atMs: localTime(world, day, 10, 16 + Math.floor(random() * 6)), cause: 'intake' }));
  const reportWindows = Array.from({ length: days }, (_, day) => [
    localTime(world, day, 22, 25),
    ...(lpcDays.has(day) ? [localTime(world, day, 10, 20), localTime(world, day, 20, 25)] : []),
  ]).flat();
  const firstHour = localTime(world, 0, 11);
  const hours = (localTime(world, days, 8) - firstHour) / hourMs;
  const taken = [...intake.map((k) => k.atMs), ...reportWindows];
  const others: { atMs: number; cause: string }[] = [];
  while (intake.length + others.length < count) {
    const hour = firstHour + Math.floor(random() * hours) * hourMs;
    const early = others.length % 3 !== 2;
    const at = hour + Math.round((early ? 16 + random() * 6 : random() * 60) * minuteMs);
    if (taken.every((t) => Math.abs(t - at) >= 45 * minuteMs)) {
      taken.push(at);
      others.push({ atMs: at, cause: early ? 'early in an hour' : 'anywhere' });
    }
  }
  return [...intake, ...others];
}

/**
 * Kills the daemon when the API has accepted a report of an event (one of the outbox's rows) from
 * a running process, `count` times, but never at the next answer (the report sent again at the
 * restart: an LPC acknowledgement, which the API accepts again, would otherwise be killed over and
 * over). Plan reports, which answer no event, are let through.
 */
function killOnReportAnswers(world: World, daemon: RestartingDaemon, count: number): void {
  let killedLast = false;
  const eventReports = (): number => world.env.sandbox.acceptedReports(String(world.config.spark.clientId)).length;
  let known = eventReports();
  world.proxy!.onAnswer = (req) => {
    if (req.method !== 'POST' || !req.path.endsWith('/reports')) return;
    const ofEvent = eventReports() > known;
    known = eventReports();
    const running = daemon.incarnations.at(-1)!.logs.some(isRunningLine);
    const kill = req.status === 200 && ofEvent && !killedLast && running && daemon.kills.filter((k) => k.cause === 'report').length < count;
    if (kill) daemon.kill('report');
    killedLast = kill;
  };
}

const isInterruptedLine = (l: DaemonLogLine): boolean =>
  l.msg === 'reports were being sent when the process stopped; they will be sent again (at least once)';

// One more run on a fresh world: the share of hours up throughout and read in full is a bound on
// time (each restart's CPU time is simulated minutes at 2500×). At load 10.7 (others' processes on
// two cores) the median restart took 160 simulated minutes and 9 of 168 hours were up throughout,
// against 50 for the bound; the CI rehearsals at load 2–4 passed it first time.
it(
  'survives fifty SIGKILLs across a simulated week without losing, duplicating or double-counting anything',
  { retry: 1, timeout: 420_000 },
  async () => {
    const t0 = Date.now();
    // The first process starts cold (seconds: hours of simulated time) before the week begins.
    // The API's one-hour token lives one wall second at this speed: a request held up longer on a
    // loaded machine meets a 401 even after its one refresh. Tokens here live a simulated day
    // (expiry itself is the auth scenario's subject).
    const world = await faultWorld('sigkill', { speed, startLocal: [4, 0], proxy: true, tokenTtlSeconds: 24 * 3600 });
    const configPath = writeConfig(world, faultOverrides);
    const weekStart = localTime(world, 0, 9);
    const weekEnd = localTime(world, days, 9);
    const random = rng(20260114);
    const events = { curves: [] as string[], lpcs: [] as string[] };

    const truthSamples = sampleTruth(world, minuteMs);
    const daemon = startRestartingDaemon(world, { configPath, maxKills: killCount });
    killOnReportAnswers(world, daemon, reportKills);
    const timeline: Timed[] = [
      ...dailyEvents(world, random, events),
      ...killMoments(world, random, killCount).map((k) => ({
        atMs: k.atMs,
        // Each process runs a while first, so that a late kill does not land on the next start.
        run: () => daemon.killAfterRunning(k.cause, 30 * minuteMs),
      })),
    ].sort((a, b) => a.atMs - b.atMs);
    for (const step of timeline) {
      await waitUntilSim(world, step.atMs);
      await step.run();
    }
    await waitUntilSim(world, weekEnd);
    expect(await daemon.stop()).toEqual({ code: 0, signal: null });
    truthSamples.stop();

    const { incarnations, kills } = daemon;
    const { integrity, rows, notAccepted, acceptedKeys, unreported } = readStore(world, (s) => ({
      integrity: s.integrityCheck(),
      rows: s.readHourly('device:tank', weekStart, weekEnd),
      notAccepted: s.listReports({ states: ['pending', 'sending', 'rejected'] }),
      acceptedKeys: s.listReports({ states: ['accepted'] }).map((r) => r.idempotencyKey),
      unreported: s.listEvents({ states: ['received', 'active', 'failed'] }).map((e) => e.eventId),
    }));
    const restarts = restartsOf(world, daemon);
    const nearRestart = (h: number): boolean => restarts.some((w) => [h, h + hourMs].some((edge) => edge > w.fromMs && edge < w.toMs));
    const hours = checkHours(rows, truthByHour(world).tank, truthSamples.samples, nearRestart);
    const complete = rows.filter(isComplete);
    const clean = complete.filter((r) => !nearRestart(r.hourStartMs));
    // Hours the daemon was up throughout (from its first start on), away from restarts.
    const downs = [{ killMs: world.startMs, ranMs: simTimeOf(world, incarnations[0]!.logs.find(isRunningLine)!) }, ...restarts];
    const upRows = rows.filter(
      (r) => !nearRestart(r.hourStartMs) && !downs.some((w) => w.killMs < r.hourStartMs + hourMs && w.ranMs > r.hourStartMs),
    );
    const weekHours = (weekEnd - weekStart) / hourMs;
    const sandboxReports = world.env.sandbox.acceptedReports(String(world.config.spark.clientId));
    // Reports against the truth where the hours are exact, and all of them against the stored hours.
    const incomplete = new Set(rows.filter((r) => !isComplete(r)).map((r) => r.hourStartMs));
    const skip = new Set([...hours.runs.flat(), ...hours.skewed]);
    const reports = checkReports(world, { gapHours: incomplete, skipHours: skip, absTolKwh: { car: Number.POSITIVE_INFINITY }, repeatedAcks: true });
    const offRows = pointsOffRows(sandboxReports, world.registration!.resources['tank']!, rows);
    const resentDuplicates = logsWith(incarnations, (l) => String(l.msg).startsWith('report was already accepted earlier'));
    const downMin = restarts.map((w) => (w.ranMs - w.killMs) / minuteMs).sort((a, b) => a - b);
    const restartsLine = `restarts ${downMin[downMin.length >> 1]!.toFixed(0)} simulated min (median, longest ${downMin.at(-1)!.toFixed(0)})`;
    process.stderr.write(
      `fault sigkill: ${wallSeconds(t0)} s wall (load ${loadavg()[0]!.toFixed(1)}), ${kills.length} kills ` +
        `(${['early in an hour', 'anywhere', 'intake', 'report'].map((c) => `${kills.filter((k) => k.cause === c).length} ${c}`).join(', ')}), ${restartsLine}, ` +
        `${complete.length}/${weekHours} tank hours complete (${upRows.filter(isComplete).length}/${upRows.length} with the daemon up throughout; ` +
        `${clean.length} away from restarts, ${clean.filter((r) => !hours.skewed.has(r.hourStartMs)).length} of them to the Wh), ` +
        `${sandboxReports.length} reports accepted (${reports.usageByEvent.size} usage, ${resentDuplicates.length} resent and refused as duplicates)\n`,
    );

    // Fifty kills, each followed by a process that got going; none died on its own.
    expect(kills.length).toBe(killCount);
    expect(incarnations.length).toBe(killCount + 1);
    for (const d of incarnations.slice(0, -1)) expect((await d.exited).signal).toBe('SIGKILL');
    for (const d of incarnations)
      expect(
        d.logs.some((l) => l.msg === 'wattshift started'),
        d.rawOutput.slice(-10).join('\n'),
      ).toBe(true);
    expect(integrity.ok, integrity.messages.join('\n')).toBe(true);

    // Hours: each once; enough of them up and read in full away from restarts to compare; none off
    // the truth or counted twice. Each start costs its CPU time (0.3 s quiet, 25 simulated minutes at
    // 5000×), and a busy machine stalls readings: at 5000× 69–85 hours were up throughout and 53–73
    // read in full at load 1.7–4, 48–66 and 32–38 with a competing busy core (load 5–6); CI at load
    // 3.5–3.9 saw 56–66 up throughout, too close to the bound; at 3500× and load 3.7, 50–51 up
    // throughout and 41–46 read in full, on the bound again, hence 2500×.
    expect(new Set(rows.map((r) => r.hourStartMs)).size).toBe(rows.length);
    expect(upRows.length, `hours with the daemon up throughout; ${restartsLine}`).toBeGreaterThanOrEqual(0.3 * weekHours);
    expect(clean.length, 'hours read in full away from restarts').toBeGreaterThanOrEqual(0.25 * weekHours);
    expect(hours.problems).toEqual([]);

    // Reports: every event of ours acted on; each report the daemon holds as accepted is at the
    // API and none is left behind; each report killed in its answer was found interrupted at the
    // next start (and sent again); every report as metered and as true as the hours allow.
    expect(events.curves).toHaveLength(days);
    expect(unreported.filter((id) => [...events.curves, ...events.lpcs].includes(id))).toEqual([]);
    expect(notAccepted).toEqual([]);
    expect(reportKeys(sandboxReports)).toEqual([...acceptedKeys].sort());
    for (const id of events.lpcs) expect(reports.acksByEvent.get(id)?.length, `acknowledgements of ${id}`).toBeGreaterThanOrEqual(1);
    const reportKilled = kills.filter((k) => k.cause === 'report');
    expect(reportKilled.length).toBeGreaterThanOrEqual(3);
    for (const k of reportKilled)
      expect(incarnations[k.incarnation + 1]!.logs.some(isInterruptedLine), `restart after the kill at ${new Date(k.atMs).toISOString()}`).toBe(true);
    expect(reports.problems).toEqual([]);
    expect(offRows).toEqual([]);

    expect(errorLines(incarnations)).toEqual([]);
    expect(secretLeaks(world, incarnations)).toEqual([]);
  },
);
