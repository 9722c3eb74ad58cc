/**
 * Local-time lookups on Intl: what one costs through the per-hour cache of `zoned-time.ts` and
 * straight from ICU, and what a 7-day 15-minute slot series costs. Prints medians of 5 rounds;
 * nothing is asserted. The last line is one JSON object.
 *
 *   npx tsx scripts/bench-zoned-time.ts
 */
import { performance } from 'node:perf_hooks';
import { slotLocalInfo } from '../src/core/local-time.js';
import { localParts, zoneOffsetMs } from '../src/core/zoned-time.js';

const zone = 'Europe/Oslo';
const start = Date.UTC(2026, 9, 20);
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const round = (x: number, digits = 2): number => Number(x.toFixed(digits));

function timeNs(calls: number, body: (i: number) => void): number {
  const rounds: number[] = [];
  for (let r = 0; r < 5; r++) {
    const t0 = performance.now();
    for (let i = 0; i < calls; i++) body(i);
    rounds.push(((performance.now() - t0) * 1e6) / calls);
  }
  return median(rounds);
}

const icu = new Intl.DateTimeFormat('en-GB', {
  timeZone: zone,
  hourCycle: 'h23',
  year: 'numeric',
  month: 'numeric',
  day: 'numeric',
  hour: 'numeric',
  minute: 'numeric',
});
// A week of minutes: every instant of a planning horizon, hours repeating as the cache sees them.
const cachedNs = timeNs(20_000, (i) => zoneOffsetMs(start + (i % 10_080) * 60_000, zone));
const partsNs = timeNs(20_000, (i) => localParts(start + (i % 10_080) * 60_000, zone));
const icuNs = timeNs(20_000, (i) => icu.formatToParts(start + (i % 10_080) * 60_000));
const slots = Array.from({ length: 7 * 96 }, (_, i) => start + i * 900_000);
const weekMs = timeNs(20, () => slotLocalInfo(slots, zone)) / 1e6;

process.stdout.write(`zoneOffsetMs (cached per hour): ${round(cachedNs / 1000, 3)} µs a call\n`);
process.stdout.write(`localParts (cached offset + Date): ${round(partsNs / 1000, 3)} µs a call\n`);
process.stdout.write(`Intl formatToParts alone: ${round(icuNs / 1000, 3)} µs a call\n`);
process.stdout.write(`local hours and days of a 7-day 15-min series (672 slots): ${round(weekMs, 3)} ms\n`);
process.stdout.write(
  `${JSON.stringify({ zoneOffsetUs: round(cachedNs / 1000, 3), localPartsUs: round(partsNs / 1000, 3), icuFormatToPartsUs: round(icuNs / 1000, 3), weekSeriesMs: round(weekMs, 3) })}\n`,
);
