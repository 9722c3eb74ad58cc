/**
 * The benchmark's side of scripts/lib/loop-delay-probe.mjs: the node flags that load the probe into
 * the daemon, and a read of its figures.
 */
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import type { DaemonProcess } from './daemon-process.js';

const loopDelaySchema = z.object({
  p50Ms: z.number(),
  p99Ms: z.number(),
  maxMs: z.number(),
  /** Timer turns behind the figures (one per 10 ms when the loop is free). */
  samples: z.number(),
});
export type LoopDelay = z.infer<typeof loopDelaySchema>;

/** Node flags that load the probe. Without them the daemon ends on SIGUSR2 (Node's default). */
export const loopDelayProbeFlags = ['--import', fileURLToPath(new URL('./loop-delay-probe.mjs', import.meta.url))];

const marker = 'loop-delay ';

/**
 * The probe's figures since its previous read (or the daemon's start); it starts over. Undefined
 * when no answer comes within `timeoutMs` (the daemon is gone).
 */
export function readLoopDelay(daemon: DaemonProcess, timeoutMs = 10_000): Promise<LoopDelay | undefined> {
  const stderr = daemon.child.stderr!;
  return new Promise((resolve) => {
    let buffered = '';
    // A listener beside the daemon's own: it reads without pausing the stream.
    const onData = (chunk: Buffer): void => {
      buffered += chunk.toString('utf8');
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      const line = lines.find((l) => l.startsWith(marker));
      if (line) done(loopDelaySchema.parse(JSON.parse(line.slice(marker.length))));
    };
    const done = (figures: LoopDelay | undefined): void => {
      clearTimeout(timer);
      stderr.off('data', onData);
      resolve(figures);
    };
    const timer = setTimeout(() => done(undefined), timeoutMs);
    stderr.on('data', onData);
    daemon.child.kill('SIGUSR2');
  });
}
