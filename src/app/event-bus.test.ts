import { describe, expect, it } from 'vitest';
import { createLogger } from '../log.js';
import { createEventBus } from './event-bus.js';

function loggedBus() {
  const lines: Array<Record<string, unknown>> = [];
  const bus = createEventBus({ logger: createLogger({ destination: { write: (l: string) => void lines.push(JSON.parse(l)) } }) });
  return { bus, lines };
}

describe('the event bus', () => {
  it('gives each listener the payload, in the order the listeners were added', () => {
    const { bus } = loggedBus();
    const heard: string[] = [];
    bus.on('replanWanted', ({ reason }) => heard.push(`first ${reason}`));
    bus.on('replanWanted', ({ reason }) => heard.push(`second ${reason}`));
    bus.on('viewChanged', () => heard.push('view'));
    bus.emit('replanWanted', { reason: 'prices' });
    expect(heard).toEqual(['first prices', 'second prices']);
  });

  it('stops calling a listener once it is removed, and forgets it', () => {
    const { bus } = loggedBus();
    let calls = 0;
    const off = bus.on('reportQueued', () => calls++);
    bus.emit('reportQueued');
    off();
    bus.emit('reportQueued');
    expect(calls).toBe(1);
    expect(bus.listenerCount('reportQueued')).toBe(0);
  });

  it('logs a listener that throws with a code and still runs the others; the emitter sees no error', () => {
    const { bus, lines } = loggedBus();
    const heard: string[] = [];
    bus.on('mqttOversized', () => {
      throw new Error('broken listener');
    });
    bus.on('mqttOversized', ({ topic }) => heard.push(topic));
    expect(() => bus.emit('mqttOversized', { topic: 'wattshift/tank/mode/set' })).not.toThrow();
    expect(heard).toEqual(['wattshift/tank/mode/set']);
    expect(lines).toEqual([expect.objectContaining({ level: 'warn', code: 'APP_LISTENER_FAILED', event: 'mqttOversized' })]);
  });

  it('counts a function added twice as two listeners, each removed by its own call', () => {
    const { bus } = loggedBus();
    let calls = 0;
    const listener = (): void => void calls++;
    const offFirst = bus.on('pricesChanged', listener);
    bus.on('pricesChanged', listener);
    offFirst();
    bus.emit('pricesChanged');
    expect(calls).toBe(1);
  });
});
