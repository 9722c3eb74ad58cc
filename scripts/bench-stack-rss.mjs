/**
 * What the user's stack costs in RSS, step by step, in fresh processes with the systemd unit's
 * node flags and malloc environment: an HTTP server, Intl's time zone formatter, undici and its
 * first request, node-cron. Variants add V8 wasm flags for undici's llhttp parser. Median of
 * `--runs` processes; nothing is asserted. The last line is one JSON object.
 *
 *   node scripts/bench-stack-rss.mjs [--runs 5]
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import process from 'node:process';
import { parseArgs } from 'node:util';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({ options: { runs: { type: 'string', default: '5' } } });
const runs = Number(values.runs);

const unit = readFileSync(join(root, 'systemd', 'wattshift.service'), 'utf8');
const unitFlags = (/^ExecStart=\S+node((?: --\S+)*) /m.exec(unit)?.[1] ?? '').trim().split(/\s+/).filter(Boolean);
const unitEnv = Object.fromEntries([...unit.matchAll(/^Environment=([A-Z_]+)=(\S+)$/gm)].map((m) => [m[1], m[2]]));
const baseFlags = unitFlags.filter((f) => !f.startsWith('--wasm') && f !== '--liftoff-only');

const variants = [
  { name: 'no wasm flag', flags: [] },
  { name: '--liftoff-only', flags: ['--liftoff-only'] },
  { name: '--wasm-lazy-compilation', flags: ['--wasm-lazy-compilation'] },
  { name: 'both', flags: ['--liftoff-only', '--wasm-lazy-compilation'] },
];
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const results = {};
for (const v of variants) {
  const samples = [];
  for (let i = 0; i < runs; i++) {
    const line = execFileSync(process.execPath, [...baseFlags, ...v.flags, join(root, 'scripts/lib/stack-rss-probe.mjs')], {
      cwd: root,
      env: { ...process.env, ...unitEnv },
      encoding: 'utf8',
    });
    samples.push(JSON.parse(line.trim().split('\n').at(-1)));
  }
  const steps = Object.fromEntries(Object.keys(samples[0]).map((k) => [k, median(samples.map((s) => s[k]))]));
  results[v.name] = steps;
  process.stdout.write(
    `${v.name.padEnd(34)} ${Object.entries(steps)
      .map(([k, x]) => `${k} ${x}`)
      .join(', ')} MiB\n`,
  );
}
process.stdout.write(`${JSON.stringify({ baseFlags: baseFlags.join(' '), runs, results })}\n`);
