/**
 * `wattshift demo [--hours N] [--speed X]`: the real daemon against the sandbox and simulated
 * devices on an accelerated clock. One line per simulated hour, a short summary, and as the last
 * line the summary as one JSON object for tools. The work is in demo-run.ts, in the simulation's
 * bundle (wired in registry.ts through parts.ts).
 */
import type { CommandInfo } from './types.js';

export const demoCommand: CommandInfo = {
  name: 'demo',
  summary: 'run the daemon on an accelerated clock against the sandbox and simulated devices',
  usage: '[--hours N] [--speed X] [--keep-data]',
  options: { hours: { type: 'string' }, speed: { type: 'string' }, 'keep-data': { type: 'boolean' } },
  help: [
    '--hours: simulated hours (default 40); --speed: clock speed factor (default 1200, an hour in 3 s).',
    "--keep-data: keep the demo's database and log (removed at the end otherwise; kept when the demo fails).",
    'Prints a line per simulated hour (LPC marks the hours under a power-limitation cap), then a summary;',
    'the last line is the summary as JSON.',
    'Exit codes: 0 completed (whatever the figures), 1 the demo failed.',
  ],
};
