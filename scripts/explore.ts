/**
 * `npm run explore -- [--seeds N] [--first S] [--seed S] [--hours H] [--json]`: the fault explorer.
 * Runs the week-long home on the simulation kernel under a seeded fault schedule per seed (outages
 * of the API and the Modbus devices, daemon restarts on the same store, clock steps) and checks the
 * home's invariants after each. Exits 1 if any seed broke one; each such seed prints the one-line
 * command that runs it again.
 */
import { parseArgs } from 'node:util';
import { exploreSeed, seedReport } from '../src/simulation/explore/explore-seed.js';

const { values } = parseArgs({
  options: {
    seeds: { type: 'string', default: '1' },
    first: { type: 'string', default: '1' },
    seed: { type: 'string' },
    hours: { type: 'string', default: '36' },
    json: { type: 'boolean', default: false },
  },
});
const hours = Number(values.hours);
const seeds = values.seed !== undefined ? [Number(values.seed)] : Array.from({ length: Number(values.seeds) }, (_, i) => Number(values.first) + i);
if (!(hours > 3) || seeds.some((s) => !Number.isInteger(s)) || seeds.length === 0) {
  process.stderr.write('usage: npm run explore -- [--seeds N] [--first S] [--seed S] [--hours H (more than 3)] [--json]\n');
  process.exit(64);
}
let failed = 0;
for (const seed of seeds) {
  const started = performance.now();
  const result = await exploreSeed(seed, hours);
  const wallS = Math.round((performance.now() - started) / 100) / 10;
  if (result.violations.length > 0) failed++;
  process.stdout.write(values.json ? `${JSON.stringify({ ...result, wallS })}\n` : `${seedReport(result).join('\n')}\n  wall ${wallS} s\n`);
}
if (!values.json) process.stdout.write(`${seeds.length - failed} of ${seeds.length} seeds kept every invariant\n`);
process.exit(failed === 0 ? 0 : 1);
