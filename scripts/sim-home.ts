/**
 * `npm run sim -- --home week|winter --days N --seed S [--json] [--tick-s T] [--log FILE]`: runs a
 * simulated home on the simulation kernel (src/simulation/) and prints its figures and the digest of
 * the daemon's decisions. The winter home runs twice, planned by wattshift and on the heaters'
 * thermostats alone, and prints both and their comparison. The same home, days, seed and tick give the same digest on any machine load.
 * `--log FILE` writes the decision log, a line per entry, to find where two runs part.
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { weekFigures, weekFiguresTable } from '../src/simulation/week-figures.js';
import { runWeekHome } from '../src/simulation/week-run.js';
import { winterComparison, winterFigures } from '../src/simulation/winter-figures.js';
import { runWinterHome } from '../src/simulation/winter-run.js';

const homes = ['week', 'winter'] as const;

const { values } = parseArgs({
  options: {
    home: { type: 'string', default: 'week' },
    days: { type: 'string', default: '7' },
    seed: { type: 'string', default: '11' },
    'tick-s': { type: 'string', default: '60' },
    json: { type: 'boolean', default: false },
    log: { type: 'string' },
  },
});
const days = Number(values.days);
const seed = Number(values.seed);
const tickS = Number(values['tick-s']);
if (!(homes as readonly string[]).includes(values.home!) || !(days > 0) || !Number.isInteger(seed) || !(tickS >= 1)) {
  process.stderr.write(`usage: npm run sim -- --home ${homes.join('|')} --days N --seed S [--tick-s T] [--json] [--log FILE]\n`);
  process.exit(64);
}
const started = performance.now();
if (values.home === 'winter') {
  if (values.log) process.stderr.write('--log is for the week home only\n');
  const planned = winterFigures(await runWinterHome({ days, seed, zones: 'planned', controlTickMs: tickS * 1000 }), days, seed);
  const thermostats = winterFigures(await runWinterHome({ days, seed, zones: 'thermostats', controlTickMs: tickS * 1000 }), days, seed);
  const wallS = Math.round((performance.now() - started) / 100) / 10;
  const out = { home: 'winter', days, seed, digest: planned.digest, planned, thermostats, comparison: winterComparison(planned, thermostats), wallS };
  process.stdout.write(values.json ? `${JSON.stringify(out)}\n` : `${JSON.stringify(out, null, 2)}\n`);
  const clean = [planned, thermostats].every((f) => f.daemonErrors === 0 && f.stoppedCleanly);
  process.exit(clean ? 0 : 1);
}
const run = await runWeekHome({ days, seed, controlTickMs: tickS * 1000, keepDecisions: values.log !== undefined });
const wallS = (performance.now() - started) / 1000;
if (values.log) writeFileSync(values.log, `${run.decisionLines.join('\n')}\n`);
const figures = weekFigures(run, days, seed);
process.stdout.write(
  values.json
    ? `${JSON.stringify({ home: values.home, ...figures, wallS: Math.round(wallS * 10) / 10 })}\n`
    : `${weekFiguresTable(figures, wallS)}\n`,
);
// Sockets a library keeps for its reconnects must not hold the process open.
process.exit(figures.daemonErrors === 0 && figures.stoppedCleanly ? 0 : 1);
