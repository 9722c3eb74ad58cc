/**
 * The simulation kernel's promise: the same home and seed give the same decisions, however busy the
 * machine is. Half a day of the week-long home, once alone and once beside two CPU-bound processes
 * (as many as this machine has cores), must give the same digest of the decision log.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { runWeekHome } from '../../src/simulation/week-run.js';

const halfDay = 0.5;
const controlTickMs = 60_000;

/** A process that spins until killed. */
const burner = (): ChildProcess => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });

describe('the simulation kernel', () => {
  it('gives the same digest for the same home and seed, alone and beside two CPU-bound processes', async () => {
    const alone = await runWeekHome({ days: halfDay, seed: 11, controlTickMs, keepDecisions: true });
    const burners = [burner(), burner()];
    try {
      const loaded = await runWeekHome({ days: halfDay, seed: 11, controlTickMs, keepDecisions: true });
      // On failure, the first entry where the runs part.
      const first = alone.decisionLines.findIndex((line, i) => line !== loaded.decisionLines[i]);
      expect(first === -1 ? null : { alone: alone.decisionLines[first], loaded: loaded.decisionLines[first] }).toBeNull();
      expect(loaded.digest).toBe(alone.digest);
      expect(alone.decisions['tick']).toBeGreaterThan(700);
    } finally {
      for (const b of burners) b.kill('SIGKILL');
    }
  }, 300_000);
});
