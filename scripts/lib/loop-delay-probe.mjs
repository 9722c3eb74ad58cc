/**
 * Preloaded into the daemon by the daemon benchmark (`node --import <this file> dist/main.js`):
 * measures how late the event loop runs with node:perf_hooks' monitorEventLoopDelay. At each
 * SIGUSR2 it writes the figures since the previous one (or since start) as one stderr line,
 * `loop-delay {"p50Ms","p99Ms","maxMs","samples"}`, and starts over, so the benchmark can leave
 * start-up out. Not part of the daemon.
 *
 * The histogram holds the time between two of its timer's turns, so each figure includes the
 * sampling interval (an idle loop shows 10 ms); the interval is taken off, as
 * Elastic's APM agent does, so the figures are the delay itself.
 */
import process from 'node:process';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const resolutionMs = 10;
const histogram = monitorEventLoopDelay({ resolution: resolutionMs });
histogram.enable();
const ms = (ns) => Math.round(Math.max(0, ns / 1e6 - resolutionMs) * 100) / 100;

process.on('SIGUSR2', () => {
  const figures = { p50Ms: ms(histogram.percentile(50)), p99Ms: ms(histogram.percentile(99)), maxMs: ms(histogram.max), samples: histogram.count };
  process.stderr.write(`loop-delay ${JSON.stringify(figures)}\n`);
  histogram.reset();
});
