/** runDaemon in process: start failures map to exit codes; stop runs after a signal during start. */
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { runDaemon } from '../src/cli/daemon.js';
import { WattshiftError } from '../src/errors.js';
import { createLogger, silentLogger } from '../src/log.js';

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

  it('logs a failed start for people: what failed and why in the message, the code and what to do beside it', async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = createLogger({ level: 'info', destination: { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) } });
    const app = { start: async () => Promise.reject(new WattshiftError('AUTH_REJECTED', 'invalid_client')), stop: async () => undefined };
    await runDaemon(app, { logger, signals: signals() });
    const failed = lines.find((l) => l.level === 'error');
    expect(failed).toMatchObject({
      component: 'main',
      code: 'AUTH_REJECTED',
      msg: 'start failed: invalid_client',
      hint: expect.stringMatching(/^the API rejected the client credentials: check spark\.clientId/),
    });
    lines.length = 0;
    await runDaemon(
      { start: async () => Promise.reject(Object.assign(new Error('listen EADDRINUSE'), { code: 'EADDRINUSE' })), stop: async () => undefined },
      { logger, signals: signals() },
    );
    expect(lines.find((l) => l.level === 'error')).toMatchObject({ code: 'EADDRINUSE', msg: 'start failed: listen EADDRINUSE' });
    expect(lines.find((l) => l.level === 'error')).not.toHaveProperty('hint');
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
