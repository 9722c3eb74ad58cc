/**
 * The energy history (days, months, planned against metered) from a real SQLite file on disk,
 * through the real status server's page and `/api/history`, and through `wattshift status`.
 * Times are relative to the real clock (the CLI reads it); the checks use yesterday and earlier
 * months, which are whole whatever the hour.
 */
import { EventEmitter } from 'node:events';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../src/cli/dispatch.js';
import { parseConfig } from '../src/config/load.js';
import type { ConfigInput } from '../src/config/schema.js';
import { historyPeriods } from '../src/core/energy-history.js';
import { DaemonMetrics } from '../src/status/metrics.js';
import { readEnergyHistory, type EnergyHistory } from '../src/status/history.js';
import { startStatusServer, type StatusServer } from '../src/status/server.js';
import { openStore, type HourlyEnergyInput, type Store } from '../src/store/index.js';
import { sampleView } from './fixtures/ha/sample-view.js';
import { tempDir } from './helpers/temp-dir.js';

const H = 3_600_000;
const TZ = 'Europe/Oslo';

function document(db: string): ConfigInput {
  return {
    version: 1,
    site: { timezone: TZ, priceArea: 'NO1', currency: 'NOK', locationLimitKw: 17 },
    spark: { clientId: 'c', clientSecret: 's' },
    modbus: { main: { type: 'tcp', host: '127.0.0.1', port: 1502 } },
    devices: [
      {
        id: 'tank',
        name: 'Hot water',
        kind: 'hotWaterTank',
        switch: { type: 'modbus', bus: 'main', unitId: 1, profile: 'wattshift-sim-tank' },
        model: { volumeL: 200, elementKw: 2 },
      },
      {
        id: 'car',
        name: 'Garage',
        kind: 'evCharger',
        charger: { type: 'goe', topicPrefix: 'go-eCharger/h1' },
        safeCurrentA: 6,
        model: { capacityKwh: 60, targetEnergyKwh: 20, departure: '07:00', minCurrentA: 6, maxCurrentA: 16, phases: 3 },
      },
      { id: 'grid', name: 'Main meter', kind: 'meter', meter: { type: 'modbus', bus: 'main', unitId: 2, profile: 'eastron-sdm120' } },
    ],
    mqtt: { url: 'mqtt://127.0.0.1:1883' },
    storage: { path: db },
    http: { enabled: false },
  };
}

const hours = (fromMs: number, toMs: number): number[] => Array.from({ length: (toMs - fromMs) / H }, (_, i) => fromMs + i * H);

/**
 * The home's stored life: 400 days of whole-home hours at 0.5 kWh (one hour missing two months
 * ago); yesterday's tank hours at 1 kWh but one partial (0.4) and one missing; nothing for the car;
 * a plan of 2 kWh tank hours made an hour before yesterday began, and an unreadable plan.
 */
function seed(store: Store, nowMs: number) {
  const { days, months } = historyPeriods(nowMs, TZ, { days: 14, months: 12 });
  const yesterday = days[1]!;
  const currentHour = Math.floor(nowMs / H) * H;
  const missingHome = months[2]!.startMs + 5 * H;
  const home: HourlyEnergyInput[] = hours(currentHour - 400 * 24 * H, currentHour)
    .filter((h) => h !== missingHome)
    .map((h) => ({ subject: 'location', hourStartMs: h, kwh: 0.5, quality: 'measured', samples: 12 }));
  store.upsertHourly(home);
  const yHours = hours(yesterday.startMs, yesterday.endMs);
  const tank: HourlyEnergyInput[] = yHours
    .slice(0, -1)
    .map((h, i) => ({ subject: 'device:tank', hourStartMs: h, kwh: i === 3 ? 0.4 : 1, quality: i === 3 ? 'partial' : 'measured', samples: 12 }));
  store.upsertHourly(tank);
  const madeMs = yesterday.startMs - H;
  store.savePlan({
    createdAtMs: madeMs - H,
    horizonStartMs: madeMs,
    horizonEndMs: nowMs + 24 * H,
    json: { createdMs: madeMs - H, slots: 'not a list' },
  });
  const endMs = currentHour + 24 * H;
  const slots = hours(madeMs, endMs).map((h) => ({
    startMs: h,
    endMs: h + H,
    price: 1,
    delta: 0,
    source: 'spot',
    headroomKw: 10,
    binding: [],
    reason: 'cheap',
    tank: { energyKwh: 2, powerKw: 2, on: true, endTempC: 60 },
    ev: { energyKwh: 0, powerKw: 0, on: false, chargedKwh: 0 },
  }));
  const plan = {
    createdMs: madeMs,
    currency: 'NOK',
    slotMinutes: 60,
    startMs: madeMs,
    endMs,
    mode: 'optimal',
    slots,
    cost: 1,
    baselineCost: 2,
    baselineRespectsLimits: true,
    incentiveEarned: 0,
    shortfalls: [],
  };
  store.savePlan({ createdAtMs: madeMs, horizonStartMs: madeMs, horizonEndMs: endMs, json: plan });
  // Money at the main meter: yesterday priced but for two hours, each 1.50 NOK with 0.10 earned and a
  // 2.00 NOK baseline (one hour has no baseline: it saves nothing); last month every hour at 1.00.
  const cost = (hourStartMs: number, total: number, delta: number, baselineTotal: number | null) => ({
    subject: 'location',
    hourStartMs,
    kwh: 0.5,
    currency: 'NOK',
    spotPerKwh: 1,
    source: 'actual' as const,
    gridPeriod: 'day',
    energy: total,
    gridFee: 0,
    tax: 0,
    subsidy: 0,
    vat: 0,
    delta,
    total,
    baselineKwh: baselineTotal === null ? null : 1,
    baselineTotal,
  });
  store.upsertHourlyCost(yHours.slice(2).map((h, i) => cost(h, 1.5, -0.1, i === 0 ? null : 2)));
  // Last month's hours before the day before yesterday (on the first two days of a month, those days
  // are last month's last: the day before yesterday stays unpriced and yesterday keeps its prices).
  store.upsertHourlyCost(hours(months[1]!.startMs, Math.min(months[1]!.endMs, days[2]!.startMs)).map((h) => cost(h, 1, 0, null)));
  return { yesterday, dayBefore: days[2]!, yHours: yHours.length, months, missingHome };
}

function checkHistory(h: EnergyHistory, s: ReturnType<typeof seed>): void {
  const y = h.days[1]!;
  expect(y.label).toBe(s.yesterday.label);
  expect(y.energy.tank).toEqual({ kwh: expect.closeTo(s.yHours - 2 + 0.4, 6), quality: 'partial', hours: s.yHours, completeHours: s.yHours - 2 });
  expect(y.energy.car).toEqual({ kwh: 0, quality: 'gap', hours: s.yHours, completeHours: 0 });
  expect(y.energy.grid).toEqual({ kwh: expect.closeTo(s.yHours * 0.5, 6), quality: 'complete', hours: s.yHours, completeHours: s.yHours });
  // Planned against metered: the whole tank hours of yesterday (not the partial, not the missing one).
  expect(y.plan.tank).toEqual({ plannedKwh: 2 * (s.yHours - 2), meteredKwh: s.yHours - 2, hours: s.yHours - 2 });
  expect(y.plan.car).toBeUndefined(); // never metered
  expect(h.days[2]!.plan).toEqual({}); // before the plan was made
  const m1 = h.months[1]!;
  const m1Hours = (m1.endMs - m1.startMs) / H;
  expect(m1.energy.grid).toEqual({ kwh: expect.closeTo(m1Hours * 0.5, 6), quality: 'complete', hours: m1Hours, completeHours: m1Hours });
  expect(h.months[2]!.energy.grid!.quality).toBe('partial');
  expect(h.months[2]!.energy.grid!.completeHours).toBe(h.months[2]!.energy.grid!.hours - 1);
  expect(h.devices).toEqual([
    { id: 'tank', name: 'Hot water', wholeHome: false },
    { id: 'car', name: 'Garage', wholeHome: false },
    { id: 'grid', name: 'Main meter', wholeHome: true },
  ]);
  expect(h.unreadablePlans).toBe(1);
  // Money: yesterday partial (two hours unpriced), last month complete, two days ago not priced.
  const priced = s.yHours - 2;
  expect(y.money).toEqual({
    cost: expect.closeTo(1.5 * priced, 6),
    incentive: expect.closeTo(0.1 * priced, 6),
    savings: expect.closeTo(0.5 * (priced - 1), 6),
    quality: 'partial',
    pricedHours: priced,
    hours: s.yHours,
  });
  // Last month: every hour at 1.00, but on the first two days of a month the day before yesterday
  // (unpriced) and yesterday (its own prices) may be its last days.
  const plain = (Math.min(m1.endMs, s.dayBefore.startMs) - m1.startMs) / H;
  const yesterdayInM1 = s.yesterday.startMs < m1.endMs;
  const m1Priced = plain + (yesterdayInM1 ? priced : 0);
  expect(m1.money).toEqual({
    cost: expect.closeTo(plain + (yesterdayInM1 ? 1.5 * priced : 0), 6),
    incentive: expect.closeTo(yesterdayInM1 ? 0.1 * priced : 0, 6),
    savings: expect.closeTo(yesterdayInM1 ? 0.5 * (priced - 1) : 0, 6),
    quality: m1Priced === m1Hours ? 'complete' : 'partial',
    pricedHours: m1Priced,
    hours: m1Hours,
  });
  expect(h.days[2]!.money).toMatchObject({ quality: 'gap', pricedHours: 0 });
  expect(h.currency).toBe('NOK');
}

const servers: StatusServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

describe('energy history', () => {
  it('days, months and planned against metered from a store on disk, on the page and at /api/history', async () => {
    const dir = tempDir('wattshift-history-');
    const db = join(dir, 'w.db');
    const config = parseConfig(document(db)).config;
    const store = openStore({ path: db });
    // Mid-month (the page takes its time from the view); `wattshift status` below runs at today's date.
    const nowMs = Date.UTC(2026, 10, 18, 10);
    const s = seed(store, nowMs);
    checkHistory(readEnergyHistory(store, config, nowMs), s);

    const server = await startStatusServer({
      port: 0,
      getView: () => sampleView(nowMs),
      getHistory: (at) => readEnergyHistory(store, config, at),
      metrics: new DaemonMetrics({ version: 'test', processMetrics: false }),
      timezone: TZ,
    });
    servers.push(server);
    const api = await fetch(`${server.url}/api/history`);
    expect(api.status).toBe(200);
    checkHistory((await api.json()) as EnergyHistory, s);

    const page = await (await fetch(`${server.url}/`)).text();
    const row = (table: string, label: string): string =>
      new RegExp(`<table class="history" id="${table}">.*?<tr data-period="${label}">(.*?)</tr>`, 's').exec(page)?.[1] ?? '';
    const y = row('history-days', s.yesterday.label);
    expect(y).toContain(
      `data-quality="partial">${(s.yHours - 2 + 0.4).toFixed(1)} kWh<small>partial: ${s.yHours - 2} of ${s.yHours} h whole</small>`,
    );
    expect(y).toContain('data-quality="gap">no data');
    expect(y).toContain(`data-quality="complete">${(s.yHours * 0.5).toFixed(1)} kWh</td>`);
    expect(page).toContain('<th class="num">Main meter (whole home)</th>');
    const priced = s.yHours - 2;
    expect(y).toContain(`data-quality="partial">${(1.5 * priced).toFixed(2)} NOK<small>partial: ${priced} of ${s.yHours} h priced</small>`);
    expect(y).toContain(`${(0.5 * (priced - 1)).toFixed(2)} NOK<small>`);
    expect(row('history-days', s.dayBefore.label)).toContain('data-quality="gap" colspan="3">not priced');
    expect(row('history-months', s.months[2]!.label)).toContain('data-quality="partial"');
    expect(page).toMatch(
      new RegExp(
        `<td>${s.yesterday.label}</td><td>Hot water</td><td class="num">${(2 * (s.yHours - 2)).toFixed(1)} kWh</td><td class="num">${(s.yHours - 2).toFixed(1)} kWh</td><td class="num">${s.yHours - 2} h</td>`,
      ),
    );
    expect(page).toContain('1 stored plan(s) could not be read');

    // The store fails: the page still renders and says why; the JSON answers 503 with the code.
    store.close();
    const broken = await fetch(`${server.url}/`);
    expect(broken.status).toBe(200);
    expect(await broken.text()).toMatch(/History not available: STORE_FAILED: /);
    const brokenApi = await fetch(`${server.url}/api/history`);
    expect(brokenApi.status).toBe(503);
    expect(await brokenApi.json()).toEqual({ error: 'history not readable', code: 'STORE_FAILED' });
  });

  it('wattshift status shows the history, and --json carries it whole', async () => {
    const dir = tempDir('wattshift-history-cli-');
    const db = join(dir, 'w.db');
    const file = join(dir, 'config.yaml');
    writeFileSync(file, JSON.stringify(document(db)));
    const store = openStore({ path: db });
    const s = seed(store, Date.now());
    store.close();
    const run = async (args: string[]) => {
      const out: string[] = [];
      const code = await runCli(args, {
        stdout: (l) => void out.push(l),
        stderr: (l) => void out.push(l),
        env: {},
        signals: new EventEmitter() as never,
      });
      return { code, text: out.join('\n') };
    };
    const json = await run(['status', '--config', file, '--json']);
    expect(json.code, json.text).toBe(0);
    checkHistory((JSON.parse(json.text) as { history: EnergyHistory }).history, s);
    const text = await run(['status', '--config', file]);
    expect(text.text).toContain(
      `  ${s.yesterday.label}  Hot water: ${(s.yHours - 2 + 0.4).toFixed(1)} kWh (partial: ${s.yHours - 2}/${s.yHours} h); Garage: no data; Main meter (whole home): ${(s.yHours * 0.5).toFixed(1)} kWh`,
    );
    expect(text.text).toContain(
      `Main meter (whole home): ${(s.yHours * 0.5).toFixed(1)} kWh; cost ${(1.5 * (s.yHours - 2)).toFixed(2)} NOK, incentive ${(0.1 * (s.yHours - 2)).toFixed(2)} NOK, saved ${(0.5 * (s.yHours - 3)).toFixed(2)} NOK (partial: ${s.yHours - 2}/${s.yHours} h priced)`,
    );
    expect(text.text).toContain(
      `  ${s.yesterday.label}  Hot water: planned ${(2 * (s.yHours - 2)).toFixed(1)} kWh, metered ${(s.yHours - 2).toFixed(1)} kWh over ${s.yHours - 2} h`,
    );
  });
});

describe('the history of a fresh install', () => {
  const run = async (args: string[]) => {
    const out: string[] = [];
    const code = await runCli(args, {
      stdout: (l) => void out.push(l),
      stderr: (l) => void out.push(l),
      env: {},
      signals: new EventEmitter() as never,
    });
    return { code, text: out.join('\n') };
  };

  /** The page, `/api/history` and `wattshift status` of the store as it is now. */
  async function shown(store: Store, db: string, dir: string) {
    const config = parseConfig(document(db)).config;
    const nowMs = Date.now();
    const server = await startStatusServer({
      port: 0,
      getView: () => sampleView(nowMs),
      getHistory: (at) => readEnergyHistory(store, config, at),
      metrics: new DaemonMetrics({ version: 'test', processMetrics: false }),
      timezone: TZ,
    });
    servers.push(server);
    const page = await (await fetch(`${server.url}/`)).text();
    const api = (await (await fetch(`${server.url}/api/history`)).json()) as EnergyHistory;
    const file = join(dir, 'config.yaml');
    writeFileSync(file, JSON.stringify(document(db)));
    const text = (await run(['status', '--config', file])).text;
    const history = page.slice(page.indexOf('<h2 id="history">'));
    const periods = (table: string): string[] =>
      [...(new RegExp(`<table class="history" id="${table}">(.*?)</table>`, 's').exec(history)?.[1] ?? '').matchAll(/data-period="([^"]+)"/g)].map(
        (m) => m[1]!,
      );
    return { nowMs, history, api, text, days: periods('history-days'), months: periods('history-months') };
  }

  it('says plainly that nothing is metered yet, instead of a year of empty periods; the JSON keeps every period', async () => {
    const dir = tempDir('wattshift-history-fresh-');
    const db = join(dir, 'w.db');
    const store = openStore({ path: db });
    const s = await shown(store, db, dir);
    expect(s.history).toContain('Nothing metered yet');
    expect(s.history).not.toContain('no data');
    expect(s.days).toEqual([]);
    expect(s.months).toEqual([]);
    expect(s.api.days).toHaveLength(14);
    expect(s.api.months).toHaveLength(12);
    expect(s.text).toContain('History: nothing metered yet');
    expect(s.text).not.toContain('no data');
    store.close();
  });

  it('shows the periods from now back to the first one metered, and no older ones', async () => {
    const dir = tempDir('wattshift-history-young-');
    const db = join(dir, 'w.db');
    const store = openStore({ path: db });
    const nowMs = Date.now();
    const currentHour = Math.floor(nowMs / H) * H;
    const firstHour = currentHour - 30 * H;
    store.upsertHourly(
      hours(firstHour, currentHour).map((h) => ({ subject: 'location', hourStartMs: h, kwh: 0.5, quality: 'measured' as const, samples: 12 })),
    );
    const s = await shown(store, db, dir);
    const { days, months } = historyPeriods(s.nowMs, TZ, { days: 14, months: 12 });
    const upTo = <T extends { startMs: number; endMs: number; label: string }>(ps: T[]): string[] =>
      ps.slice(0, ps.findIndex((p) => p.startMs <= firstHour && firstHour < p.endMs) + 1).map((p) => p.label);
    expect(s.days).toEqual(upTo(days));
    expect(s.days.length).toBeGreaterThanOrEqual(2);
    expect(s.months).toEqual(upTo(months));
    expect(s.history).not.toContain('Nothing metered yet');
    const textDays = [...s.text.matchAll(/^ {2}(\d{4}-\d{2}-\d{2}) {2}Hot water/gm)].map((m) => m[1]);
    expect(textDays).toEqual(upTo(days));
    store.close();
  });
});
