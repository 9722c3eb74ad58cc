/**
 * The entry of the simulation's bundle (dist/sim.js): `wattshift sandbox`, `sim` and `demo`,
 * loaded by parts.ts when one of them runs.
 */
import { runDemoCommand } from './demo-run.js';
import { partEntry } from './part-entry.js';
import { runSandboxCommand } from './sandbox-run.js';
import { runSimCommand } from './sim-run.js';

export const { runPartCommand } = partEntry({ sandbox: runSandboxCommand, sim: runSimCommand, demo: runDemoCommand });
