/**
 * The shipped build: `scripts/build.mjs` bundles the gateway, the hub and the simulation into dist/. Every other test runs the
 * TypeScript sources; this one builds a bundle of its own and runs it the way systemd does (the
 * unit's node flags and environment), to catch what only bundling breaks: data files found
 * relative to the package, chunks loaded on demand, native addons left in node_modules.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildBundle } from '../scripts/build.mjs';
import { repoRoot } from '../scripts/lib/daemon-process.js';
import { unitEnvironment, unitNodeFlags } from '../scripts/lib/systemd-unit.js';
import { tempDir } from './helpers/temp-dir.js';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

let outdir: string;
let built: Awaited<ReturnType<typeof buildBundle>>;

function runBundle(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  const child = spawn(process.execPath, [...unitNodeFlags(), join(outdir, 'main.js'), ...args], {
    cwd: outdir,
    env: { PATH: process.env.PATH, ...unitEnvironment(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

/** The demo's log, from the path its first line names (the demo logs to a file, not to stdout). */
function demoLog(r: Run): string {
  const file = /logs in (\S+)$/m.exec(r.stdout)?.[1];
  if (!file) throw new Error(`the demo named no log file: ${r.stdout.slice(0, 500)}`);
  return readFileSync(file, 'utf8');
}

/** Files node loaded through require(), from NODE_DEBUG=module lines. */
function requiredFiles(stderr: string): string[] {
  return [...stderr.matchAll(/^MODULE \d+: load "([^"]+)"/gm)].map((m) => m[1]!);
}

beforeAll(async () => {
  // Inside the package, as in an install: the bundle finds profiles/ and package.json above it.
  outdir = mkdtempSync(join(repoRoot, '.tmp-bundle-'));
  built = await buildBundle(outdir);
}, 60_000);

afterAll(() => rmSync(outdir, { recursive: true, force: true }));

describe('the bundle', () => {
  it('reports the version from package.json', async () => {
    const { version } = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string };
    const r = await runBundle(['version']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`wattshift ${version} (node `);
  });

  it('runs the demo end to end: sandbox, broker, Modbus tank from a built-in profile, reports', async () => {
    // The demo keeps its data directory (--keep-data, for its log) under TMPDIR; this one goes when the test passes.
    const r = await runBundle(['demo', '--hours', '4', '--speed', '3600', '--keep-data'], {
      NODE_DEBUG: 'module',
      TMPDIR: tempDir('wattshift-bundle-demo-'),
    });
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
    const summary = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { floorViolations: number; capViolations: number; reportsRejected: number };
    expect(summary).toMatchObject({ floorViolations: 0, capViolations: 0, reportsRejected: 0 });
    expect(r.stdout).not.toMatch(/"level":50/);
    // The planner ran on its worker thread, loaded from the bundle's own entry.
    expect(existsSync(join(outdir, 'jobs', 'plan-worker-thread.js'))).toBe(true);
    const log = demoLog(r);
    expect(log).toMatch(/"component":"planner"/);
    expect(log).not.toMatch(/PLAN_WORKER_FAILED/);
    // The dependencies come from the bundle; only the native addons (and what they require) load from node_modules.
    const packageOf = (f: string): string => {
      const rest = f.split('/node_modules/').at(-1)!.split('/');
      return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
    };
    const fromNodeModules = new Set(
      requiredFiles(r.stderr)
        .filter((f) => f.includes('/node_modules/'))
        .map(packageOf),
    );
    expect(fromNodeModules).toContain('better-sqlite3');
    const { dependencies } = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    const hasNativeAddon = (d: string): boolean => existsSync(join(repoRoot, 'node_modules', d, 'binding.gyp'));
    const bundled = Object.keys(dependencies).filter((d) => !hasNativeAddon(d));
    expect(bundled).toContain('zod');
    expect(bundled.filter((d) => fromNodeModules.has(d))).toEqual([]);
  }, 120_000);

  it("holds none of the hub's, the sandbox's, the simulators' or the demo's sources in the gateway's outputs", () => {
    const inputs = new Set(Object.values(built.gateway.metafile.outputs).flatMap((o) => Object.keys(o.inputs)));
    expect(inputs).toContain('src/main.ts');
    expect(inputs).toContain('src/app.ts');
    expect([...inputs].filter((f) => /^src\/(hub|sandbox|simulation|demo)\//.test(f))).toEqual([]);
    // Theirs are in their own bundles, which the gateway's command loads by file.
    expect(Object.keys(built.hub.metafile.outputs)).toContainEqual(expect.stringMatching(/\/hub\.js$/));
    expect(Object.keys(built.sim.metafile.outputs)).toContainEqual(expect.stringMatching(/\/sim\.js$/));
  });

  it("runs the hub's command from the hub's bundle, and says plainly when that bundle is not installed", async () => {
    const usage = await runBundle(['hub']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/^wattshift hub: --config FILE is required$/m);
    rmSync(join(outdir, 'hub.js'));
    const missing = await runBundle(['hub', '--config', 'hub.yaml']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(
      /^wattshift: PART_NOT_INSTALLED: `wattshift hub` is not installed here: the fleet hub ships apart from the gateway/m,
    );
    // The gateway's own commands do not need it.
    expect((await runBundle(['version'])).code).toBe(0);
  });

  // Last: it removes the planner thread's entry from this bundle.
  it('plans on the main thread, with one PLAN_WORKER_FAILED warning, when the bundle lacks the thread entry', async () => {
    rmSync(join(outdir, 'jobs', 'plan-worker-thread.js'));
    const r = await runBundle(['demo', '--hours', '2', '--speed', '3600', '--keep-data'], { TMPDIR: tempDir('wattshift-bundle-nothread-') });
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
    const warnings = demoLog(r)
      .split('\n')
      .filter((l) => l.includes('PLAN_WORKER_FAILED'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/file is missing; planning on the main thread/);
    const summary = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { floorViolations: number; reportsRejected: number };
    expect(summary).toMatchObject({ floorViolations: 0, reportsRejected: 0 });
    expect(r.stdout).not.toMatch(/"level":50/);
  }, 120_000);
});
