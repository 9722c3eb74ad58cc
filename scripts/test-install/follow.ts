/**
 * Follows the walk's report (walk.sh writes it on the VM's second serial port, QEMU into a file):
 * prints it as it comes, collects `STEP <name> PASS|FAIL <s>s [why]`, and stops the VM when a wait
 * runs out: the boot (to the walk's first line, after either boot), a step, or the whole run.
 */
import type { ChildProcess } from 'node:child_process';
import { closeSync, openSync, readSync } from 'node:fs';

export interface WalkStep {
  name: string;
  pass: boolean;
  seconds: number;
  why?: string;
}

export interface WalkResult {
  steps: WalkStep[];
  /** Why the walk did not end as it should (a timeout, the VM stopping early), or null. */
  problem: string | null;
}

const bootMs = 10 * 60_000;
const stepMs = 20 * 60_000;
const stepLine = /^STEP (\S+) (PASS|FAIL) ([\d.]+)s ?(.*)$/;

export function followWalk(o: { qemu: ChildProcess; walkLog: string; consoleLog: string; overallMs: number }): Promise<WalkResult> {
  const steps: WalkStep[] = [];
  let done = false;
  let offset = 0;
  let partial = '';
  const startMs = Date.now();
  // What the walk is waiting on and until when: set by each line that starts or ends a wait.
  let waiting = { what: 'the first boot to start the walk', untilMs: startMs + bootMs };
  const fd = openSync(o.walkLog, 'r');
  const buf = Buffer.alloc(1 << 16);

  const take = (line: string): void => {
    console.log(`  vm| ${line}`);
    const step = stepLine.exec(line);
    if (step) {
      steps.push({ name: step[1]!, pass: step[2] === 'PASS', seconds: Number(step[3]), ...(step[4] ? { why: step[4] } : {}) });
      waiting = { what: 'the next step', untilMs: Date.now() + stepMs };
    } else if (line.startsWith('BEGIN ')) waiting = { what: `step ${line.slice(6)}`, untilMs: Date.now() + stepMs };
    else if (line === 'WALK REBOOT') waiting = { what: 'the reboot to start the walk again', untilMs: Date.now() + bootMs };
    else if (line.startsWith('WALK DONE')) {
      done = true;
      waiting = { what: 'the VM to power off', untilMs: Date.now() + bootMs };
    }
  };
  const drain = (): void => {
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, offset);
      if (n === 0) break;
      offset += n;
      partial += buf.subarray(0, n).toString('utf8');
      const lines = partial.split('\n');
      partial = lines.pop() ?? '';
      for (const l of lines) take(l.replace(/\r$/, ''));
    }
  };

  return new Promise((resolve) => {
    let problem: string | null = null;
    const poll = setInterval(() => {
      drain();
      const now = Date.now();
      const late =
        now > waiting.untilMs
          ? `waited too long for ${waiting.what}`
          : now > startMs + o.overallMs
            ? `the run took longer than ${o.overallMs / 60_000} min`
            : null;
      if (late && problem === null) {
        problem = late;
        o.qemu.kill('SIGTERM');
        setTimeout(() => o.qemu.kill('SIGKILL'), 10_000).unref();
      }
    }, 1_000);
    o.qemu.on('exit', (code, signal) => {
      clearInterval(poll);
      drain();
      if (partial) take(partial);
      closeSync(fd);
      if (problem === null && !done) problem = `the VM stopped (${signal ?? `exit ${code}`}) before the walk ended`;
      resolve({ steps, problem });
    });
  });
}
