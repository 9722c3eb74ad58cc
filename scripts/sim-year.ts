/**
 * `npm run sim:year -- [--days N] [--seed S] [--json]`: the week-long home round the year on the
 * simulation kernel (src/simulation/year-home.ts): seasonal house load and hot water draws, the
 * API sandbox's seeded year of prices, Elvia's tariff with its capacity steps, and each week a cap
 * and a price-curve delta. Prints the annual bill, the savings against the naive baseline, the
 * incentive, the capacity steps avoided, the minutes below each comfort floor, the cap violations
 * and the reports accepted, as a table or (`--json`) as one JSON line. The same days and seed give
 * the same digest on any machine load. Exits 1 on a cap violation, a daemon error line or an
 * unclean stop.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parseTariff, tariffDir } from '../src/config/tariff-file.js';
import { demoTimezone } from '../src/demo/environment.js';
import { runWeekHome, weekStartMs } from '../src/simulation/week-run.js';
import { yearFigures, yearFiguresTable } from '../src/simulation/year-figures.js';
import { yearEvents, yearSeasons } from '../src/simulation/year-home.js';

const { values } = parseArgs({
  options: {
    days: { type: 'string', default: '365' },
    seed: { type: 'string', default: '11' },
    json: { type: 'boolean', default: false },
  },
});
const days = Number(values.days);
const seed = Number(values.seed);
if (!Number.isInteger(days) || days < 1 || !Number.isInteger(seed)) {
  process.stderr.write('usage: npm run sim:year -- [--days N (whole, at least 1)] [--seed S] [--json]\n');
  process.exit(64);
}
const seasons = yearSeasons(weekStartMs, days, seed, demoTimezone);
const { tariff } = parseTariff(readFileSync(join(tariffDir(), `${seasons.tariff}.yaml`), 'utf8'), `${seasons.tariff}.yaml`);
const started = performance.now();
const run = await runWeekHome({ days, seed, controlTickMs: 60_000, seasons, events: yearEvents(weekStartMs, days, seed) });
const wallS = (performance.now() - started) / 1000;
const figures = yearFigures(run, days, seed, tariff?.capacity);
process.stdout.write(
  values.json
    ? `${JSON.stringify({ home: 'week', mode: 'year', ...figures, wallS: Math.round(wallS * 10) / 10 })}\n`
    : `${yearFiguresTable(figures, wallS)}\n`,
);
// Sockets a library keeps for its reconnects must not hold the process open.
process.exit(figures.capViolations === 0 && figures.daemonErrors === 0 && figures.stoppedCleanly ? 0 : 1);
