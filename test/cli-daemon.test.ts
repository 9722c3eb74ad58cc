/** runDaemon in process: start failures map to exit codes; stop runs after a signal during start. */
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { runDaemon } from '../src/cli/daemon.js';
import { WattshiftError } from '../src/errors.js';
import { silentLogger } from '../src/log.js';

function signals(): EventEmitter & Pick<NodeJS.Process, 'on' | 'off'> {
  return new EventEmitter() as EventEmitter & Pick<NodeJS.Process, 'on' | 'off'>;
}

describe('runDaemon', () => {
  it('exits 78 when start fails with AUTH_REJECTED, after stopping', async () => {
    const calls: string[] = [];
    const app = {
      start: async () => {
        calls.push('start');
        throw new WattshiftError('AUTH_REJECTED', 'invalid_client');
      },
      stop: async () => void calls.push('stop'),
    };
    expect(await runDaemon(app, { logger: silentLogger(), signals: signals() })).toBe(78);
    expect(calls).toEqual(['start', 'stop']);
  });

  it('exits 1 when start fails with a runtime error', async () => {
    const app = { start: async () => Promise.reject(new Error('boom')), stop: async () => undefined };
    expect(await runDaemon(app, { logger: silentLogger(), signals: signals() })).toBe(1);
  });

  it('exits 1 when stop throws', async () => {
    const s = signals();
    const app = { start: async () => undefined, stop: async () => Promise.reject(new Error('stuck')) };
    const done = runDaemon(app, { logger: silentLogger(), signals: s, onStarted: () => s.emit('SIGTERM') });
    expect(await done).toBe(1);
  });

  it('a signal during a slow start stops once start has finished', async () => {
    const s = signals();
    const calls: string[] = [];
    let finishStart: () => void = () => undefined;
    const app = {
      start: () => new Promise<void>((resolve) => (finishStart = () => (calls.push('started'), resolve()))),
      stop: async () => void calls.push('stop'),
    };
    const done = runDaemon(app, { logger: silentLogger(), signals: s });
    s.emit('SIGTERM');
    await new Promise((r) => setImmediate(r));
    expect(calls).toEqual([]);
    finishStart();
    expect(await done).toBe(0);
    expect(calls).toEqual(['started', 'stop']);
    expect(s.listenerCount('SIGTERM')).toBe(0);
  });
});
