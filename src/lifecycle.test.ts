import { describe, expect, it } from 'vitest';
import { WattshiftError } from './errors.js';
import { runModules, stopTogether, type Module } from './lifecycle.js';
import { createLogger } from './log.js';

function capture() {
  const lines: { level: string; msg: string; code?: string; module?: string }[] = [];
  const logger = createLogger({ level: 'info', destination: { write: (l: string) => void lines.push(JSON.parse(l) as (typeof lines)[number]) } });
  return { logger, lines };
}

/** A module that records its start and stop in `calls`, failing where told. */
function recorded(name: string, calls: string[], fail: { start?: Error; stop?: Error } = {}): Module {
  return {
    name,
    start: async () => {
      calls.push(`start ${name}`);
      if (fail.start) throw fail.start;
    },
    stop: async () => {
      calls.push(`stop ${name}`);
      if (fail.stop) throw fail.stop;
    },
  };
}

describe('runModules', () => {
  it('starts modules in order and stops them in reverse, once', async () => {
    const calls: string[] = [];
    const runner = runModules(
      ['a', 'b', 'c'].map((n) => recorded(n, calls)),
      capture(),
    );
    await runner.start();
    await runner.stop();
    await runner.stop();
    expect(calls).toEqual(['start a', 'start b', 'start c', 'stop c', 'stop b', 'stop a']);
  });

  it('stops the failed module and those started before it when a start fails, then rethrows that error', async () => {
    const calls: string[] = [];
    const refused = new WattshiftError('AUTH_REJECTED', 'credentials refused');
    const runner = runModules(
      [recorded('a', calls), recorded('b', calls), recorded('c', calls, { start: refused }), recorded('d', calls)],
      capture(),
    );
    await expect(runner.start()).rejects.toBe(refused);
    expect(calls).toEqual(['start a', 'start b', 'start c', 'stop c', 'stop b', 'stop a']);
    // The daemon's shell stops the app after a failed start: nothing is stopped twice.
    await runner.stop();
    expect(calls).toHaveLength(6);
  });

  it('keeps the start error when a stop during the rollback fails too', async () => {
    const calls: string[] = [];
    const { logger, lines } = capture();
    const refused = new WattshiftError('MQTT_AUTH_REJECTED', 'broker refused');
    const runner = runModules([recorded('a', calls), recorded('b', calls, { stop: new Error('stuck') }), recorded('c', calls, { start: refused })], {
      logger,
    });
    await expect(runner.start()).rejects.toBe(refused);
    expect(calls).toEqual(['start a', 'start b', 'start c', 'stop c', 'stop b', 'stop a']);
    expect(lines.filter((l) => l.msg === 'b did not stop cleanly')).toHaveLength(1);
  });

  it('logs a stop that throws, with its code, and still stops the others', async () => {
    const calls: string[] = [];
    const { logger, lines } = capture();
    const runner = runModules(
      [recorded('a', calls), recorded('b', calls, { stop: new WattshiftError('STORE_FAILED', 'disk gone') }), recorded('c', calls)],
      { logger },
    );
    await runner.start();
    await runner.stop();
    expect(calls.slice(3)).toEqual(['stop c', 'stop b', 'stop a']);
    expect(lines).toEqual([expect.objectContaining({ level: 'warn', code: 'STORE_FAILED', module: 'b', msg: 'b did not stop cleanly' })]);
  });

  it('gathers health in module order, from the modules that have any', () => {
    const runner = runModules(
      [
        { ...recorded('store', []), health: () => [{ name: 'store', ok: true }] },
        recorded('quiet', []),
        {
          ...recorded('devices', []),
          health: () => [
            { name: 'device:a', ok: false, lastError: { code: 'DEVICE_TIMEOUT', message: 'no answer', atMs: 1 } },
            { name: 'device:b', ok: true },
          ],
        },
      ],
      capture(),
    );
    expect(runner.health().map((h) => [h.name, h.ok])).toEqual([
      ['store', true],
      ['device:a', false],
      ['device:b', true],
    ]);
  });
});

describe('stopTogether', () => {
  it('starts its modules in order and stops them all at once', async () => {
    const calls: string[] = [];
    let release: () => void = () => undefined;
    const slow: Module = { ...recorded('slow', calls), stop: () => new Promise<void>((r) => ((release = r), calls.push('stop slow'))) };
    const group = stopTogether('loops', [slow, recorded('fast', calls)], capture());
    await group.start();
    const stopped = group.stop();
    // The second stop began while the first was still waiting.
    await new Promise((r) => setImmediate(r));
    expect(calls).toEqual(['start slow', 'start fast', 'stop slow', 'stop fast']);
    release();
    await stopped;
  });

  it('stops its started modules when one fails to start, and rethrows', async () => {
    const calls: string[] = [];
    const boom = new Error('port taken');
    const group = stopTogether('loops', [recorded('a', calls), recorded('b', calls, { start: boom }), recorded('c', calls)], capture());
    await expect(group.start()).rejects.toBe(boom);
    expect(calls).toEqual(['start a', 'start b', 'stop a', 'stop b']);
  });
});
