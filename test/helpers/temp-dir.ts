/**
 * Temp directories for tests: removed when their test (or file) is done, kept when it failed so
 * that its database, config and logs can be looked at; the kept path is printed once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, onTestFinished } from 'vitest';

/** A fresh directory for the running test (call it inside the test). */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  onTestFinished(({ task }) => settle(dir, task.result?.state === 'fail'));
  return dir;
}

/**
 * A fresh directory shared by the tests of a file or describe block, removed after the last one
 * unless one failed. Call it at module scope or in the describe body, where hooks can be registered.
 */
export function suiteTempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  let anyFailed = false;
  beforeEach(({ onTestFailed }) => {
    onTestFailed(() => {
      anyFailed = true;
    });
  });
  afterAll(() => settle(dir, anyFailed));
  return dir;
}

function settle(dir: string, keep: boolean): void {
  if (keep) process.stderr.write(`kept temp dir of a failed test: ${dir}\n`);
  else rmSync(dir, { recursive: true, force: true });
}
