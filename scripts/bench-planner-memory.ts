/**
 * Peak memory of one plan over a 7-day 15-minute window with a relay-only tank and an EV (the
 * planner's worst case for memory: the on/off DP over 672 slots, re-run by the joint search).
 * Part of `npm run bench:planner`; alone: `npx tsx scripts/bench-planner-memory.ts`. Linux only.
 *
 * Method: a fresh `node --expose-gc --max-semi-space-size=1` child (the service's young-space
 * flag; nothing left over from the rest of the benchmark) loads everything, forces a full GC,
 * resets the kernel's resident high-water mark (/proc/self/clear_refs) and plans once. The
 * figure is the high-water mark (VmHWM) minus the resident size before the plan: how much the
 * plan raises the process's peak RSS, counting its data wherever it lives (V8 heap or typed-array
 * buffers), its garbage not yet collected and the code compiled for it. Heap statistics sampled
 * at GCs are not used: they miss typed-array data allocated between two GCs.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { plan } from '../src/core/planner.js';
import { quarterHourly, scenario } from './bench-planner.js';
import { hourlyWindows, loadPriceSeries } from './lib/price-data.js';
import type { PlanInput } from '../src/core/types.js';

const CHILD_FLAG = '--memory-child';

function relayWindow(): { input: PlanInput; nowMs: number } {
  for (const sr of loadPriceSeries()) {
    const w = hourlyWindows(sr, 168, 168)[0];
    if (!w) continue;
    const { input, nowMs } = scenario('joint', sr, quarterHourly(w.points, 99), 99, 15);
    return { input: { ...input, tank: { ...input.tank!, control: 'relay' } }, nowMs };
  }
  throw new Error('no 7-day price window in data/prices');
}

/** A size line of /proc/self/status (`VmRSS`, `VmHWM`), MB. */
function statusMb(field: string): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(readFileSync('/proc/self/status', 'utf8'));
  if (!m) throw new Error(`/proc/self/status has no ${field}`);
  return Number(m[1]) / 1024;
}

function measureInChild(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with --expose-gc');
  const { input, nowMs } = relayWindow();
  gc();
  writeFileSync('/proc/self/clear_refs', '5');
  const before = statusMb('VmRSS');
  plan(input, nowMs);
  return statusMb('VmHWM') - before;
}

/** Runs the measurement in a fresh child process; returns MB. */
export function planPeakRssMb(): number {
  const args = ['--expose-gc', '--max-semi-space-size=1', '--import', 'tsx', fileURLToPath(import.meta.url), CHILD_FLAG];
  const run = spawnSync(process.execPath, args, { encoding: 'utf8' });
  const mb = Number(run.stdout.trim().split('\n').pop());
  if (run.status !== 0 || !Number.isFinite(mb)) throw new Error(`memory child failed (${run.status}): ${run.stderr}`);
  return mb;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const child = process.argv.includes(CHILD_FLAG);
  console.log(child ? measureInChild().toFixed(2) : `one 7-day 15-min relay tank + EV plan raises peak RSS by ${planPeakRssMb().toFixed(2)} MB`);
}
