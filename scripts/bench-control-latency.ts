/**
 * How long the control loop waits while a 7-day 15-minute joint plan (tank + EV) is made: planned
 * on the main thread against planned on the daemon's long-lived planner thread (src/jobs/plan-worker.ts,
 * the bundle's thread entry with its heap limits). A stand-in control loop ticks every 20 ms on the
 * main thread; each tick's lateness (when it ran minus when it was due) is recorded while plans run
 * back to back. Also the process's peak RSS over each mode, and its RSS after the main-thread plans
 * and after the thread's (what the idle thread adds).
 *
 *   npm run build && npx tsx scripts/bench-control-latency.ts [--plans 12]
 *
 * Prints figures (nothing is asserted); the last line is one JSON object.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { homeInputOf, planHome } from '../src/core/home-plan.js';
import type { PlanInput } from '../src/core/types.js';
import { createLogger } from '../src/log.js';
import { startPlanWorker } from '../src/jobs/plan-worker.js';
import { quarterHourly, scenario } from './bench-planner.js';
import { hourlyWindows, loadPriceSeries } from './lib/price-data.js';

const { values } = parseArgs({ options: { plans: { type: 'string', default: '12' } } });
const plans = Number(values.plans);
const tickMs = 20;

function windows(n: number): { input: PlanInput; nowMs: number }[] {
  const out: { input: PlanInput; nowMs: number }[] = [];
  let seed = 99;
  for (const sr of loadPriceSeries()) {
    for (const w of hourlyWindows(sr, 168, 48)) {
      if (out.length >= n) return out;
      out.push(scenario('joint', sr, quarterHourly(w.points, seed), seed++, 15));
    }
  }
  return out;
}

const rssMb = (): number => Number(/^VmRSS:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0) / 1024;

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] ?? 0;
}

/** Runs `work` while a 20 ms ticker measures how late each tick runs. */
async function measure(work: () => Promise<void>): Promise<{ late: number[]; peakRssMb: number; afterRssMb: number }> {
  const late: number[] = [];
  let peak = rssMb();
  let due = performance.now() + tickMs;
  let timer: NodeJS.Timeout | undefined;
  const tick = (): void => {
    const now = performance.now();
    late.push(Math.max(0, now - due));
    peak = Math.max(peak, rssMb());
    due = now + tickMs;
    timer = setTimeout(tick, tickMs);
  };
  timer = setTimeout(tick, tickMs);
  await work();
  clearTimeout(timer);
  return { late, peakRssMb: peak, afterRssMb: rssMb() };
}

// The bundle's thread, as the daemon runs it (a TypeScript entry would load tsx into the thread).
const threadFile = fileURLToPath(new URL('../dist/jobs/plan-worker-thread.js', import.meta.url));
if (!existsSync(threadFile)) throw new Error(`${threadFile} is missing: npm run build first`);

const inputs = windows(plans);
const logger = createLogger({ level: 'warn' });
// Warm the main thread's planner (JIT) before measuring.
planHome(homeInputOf(inputs[0]!.input), inputs[0]!.nowMs);
const baseRss = rssMb();
const main = await measure(async () => {
  for (const w of inputs) {
    planHome(homeInputOf(w.input), w.nowMs);
    await new Promise((r) => setImmediate(r));
  }
});
// Warm the thread too (its module loading and JIT): the daemon's thread lives as long as it does.
const worker = startPlanWorker({ logger, file: threadFile });
await worker.plan(homeInputOf(inputs[0]!.input), inputs[0]!.nowMs);
const threaded = await measure(async () => {
  for (const w of inputs) await worker.plan(homeInputOf(w.input), w.nowMs);
});
await worker.close();

const row = (name: string, m: Awaited<ReturnType<typeof measure>>): string =>
  `${name.padEnd(12)} ticks ${String(m.late.length).padStart(4)}  lateness p50 ${pct(m.late, 50).toFixed(1)} ms  p99 ${pct(m.late, 99).toFixed(1)} ms  max ${Math.max(...m.late).toFixed(1)} ms  ` +
  `peak RSS ${m.peakRssMb.toFixed(1)} MiB  after ${m.afterRssMb.toFixed(1)} MiB`;
console.log(`${inputs.length} joint 7-day 15-min plans back to back; control stand-in every ${tickMs} ms; RSS before ${baseRss.toFixed(1)} MiB`);
console.log(row('main thread', main));
console.log(row('worker', threaded));
console.log(
  JSON.stringify({
    plans: inputs.length,
    tickP99MsMainThread: Number(pct(main.late, 99).toFixed(1)),
    tickP99MsWorker: Number(pct(threaded.late, 99).toFixed(1)),
    tickMaxMsMainThread: Number(Math.max(...main.late).toFixed(1)),
    tickMaxMsWorker: Number(Math.max(...threaded.late).toFixed(1)),
    peakRssMibMainThread: Number(main.peakRssMb.toFixed(1)),
    peakRssMibWorker: Number(threaded.peakRssMb.toFixed(1)),
    rssAfterMibMainThread: Number(main.afterRssMb.toFixed(1)),
    rssAfterMibWorker: Number(threaded.afterRssMb.toFixed(1)),
  }),
);
