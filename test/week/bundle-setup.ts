/**
 * Builds the daemon as it ships (scripts/build.mjs: dist/'s bundle, with the planner's own thread)
 * into a folder of its own for the week-long home, before its clock starts: the week runs what
 * systemd runs. From src/ the planner would plan on the daemon's main thread, and at 1200× each
 * plan's tenth of a second stalls the control loop for minutes of simulated time.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { buildBundle } from '../../scripts/build.mjs';
import { repoRoot } from '../helpers/daemon-harness.js';

declare module 'vitest' {
  export interface ProvidedContext {
    weekBundleDir: string;
  }
}

export default async function setup(project: TestProject): Promise<() => void> {
  const dir = mkdtempSync(join(repoRoot, '.tmp-week-bundle-'));
  await buildBundle(dir);
  project.provide('weekBundleDir', dir);
  return () => rmSync(dir, { recursive: true, force: true });
}
