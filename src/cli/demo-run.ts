/** The work of `wattshift demo` (see demo.ts beside it), in the simulation's bundle. */
import { rmSync } from 'node:fs';
import { runDemo, type DemoResult } from '../demo/run-demo.js';
import { summaryLines } from '../demo/summary.js';
import { billLines } from '../status/bill-section.js';
import { exitCodes } from './exit-codes.js';
import { demoCommand } from './demo.js';
import type { CliIo, CommandArgs } from './types.js';

function numberOption(value: unknown, name: string, fallback: number, check: (n: number) => boolean, io: CliIo): number | null {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (typeof value !== 'string' || value.trim() === '' || !Number.isFinite(n) || !check(n)) {
    io.stderr(`wattshift demo: ${name} must be ${name === '--hours' ? 'a whole number from 1 to 336' : 'a number from 1 to 100000'}`);
    return null;
  }
  return n;
}

export async function runDemoCommand(args: CommandArgs, io: CliIo): Promise<number> {
  const hours = numberOption(args.values.hours, '--hours', 40, (n) => Number.isInteger(n) && n >= 1 && n <= 336, io);
  const speed = numberOption(args.values.speed, '--speed', 1200, (n) => n >= 1 && n <= 100_000, io);
  if (hours === null || speed === null) {
    io.stderr(`usage: wattshift demo ${demoCommand.usage}`);
    return exitCodes.usage;
  }
  let result: DemoResult;
  try {
    result = await runDemo({ out: (line) => io.stdout(line), hours, speed, keepData: args.values['keep-data'] === true });
  } catch (err) {
    io.stderr('wattshift demo: the demo failed');
    throw err;
  }
  const keep = args.values['keep-data'] === true;
  try {
    io.stdout('');
    io.stdout(
      `Summary over ${hours} simulated hours${keep ? ` (database and log kept in ${result.dataDir})` : ''}: the tank and the car, as the simulated devices metered them:`,
    );
    for (const line of summaryLines(result.summary, result.hours, result.env.config.site.currency)) io.stdout(line);
    // The daemon's own figures at the simulated main meter (house, tank and car), as the page shows them.
    io.stdout(
      result.bill
        ? "Bill at the main meter (the daemon's own figures, for the whole home: house load, tank and car, with the month's capacity fee):"
        : 'Bill at the main meter: no hour priced yet',
    );
    for (const line of result.bill ? billLines(result.bill) : []) io.stdout(`  ${line}`);
    io.stdout(JSON.stringify(result.summary));
  } finally {
    await result.env.close();
    // The demo made this folder (a fresh temp folder): nothing of the user's is in it.
    if (!keep) rmSync(result.dataDir, { recursive: true, force: true });
  }
  return exitCodes.ok;
}
