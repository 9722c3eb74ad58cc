/**
 * The OCPP session's car tag kept in the store (src/devices/ocpp/session-tags.ts), on a real
 * SQLite file: a kept tag reads back after a reopen; a corrupt row or a store that cannot write
 * costs only the tag, with a STORE_FAILED warning, never an exception into the charger.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { storedSessionTags } from '../src/devices/ocpp/session-tags.js';
import { createLogger } from '../src/log.js';
import { openStore } from '../src/store/index.js';
import { tempDir } from './helpers/temp-dir.js';

function capture() {
  const lines: { level: string; code?: string; msg: string }[] = [];
  const logger = createLogger({ level: 'debug', destination: { write: (l: string) => void lines.push(JSON.parse(l)) } });
  return { logger, lines };
}

describe('the OCPP session tag memory', () => {
  it('keeps the tag across a reopen of the store and forgets it when the session ends', () => {
    const path = join(tempDir('wattshift-tags-'), 'w.db');
    const { logger, lines } = capture();
    const first = openStore({ path });
    storedSessionTags(first, 'cp', logger).set({ transactionId: 7, idTag: 'CARD-7' });
    first.close();

    const again = openStore({ path });
    const memory = storedSessionTags(again, 'cp', logger);
    expect(memory.get()).toEqual({ transactionId: 7, idTag: 'CARD-7' });
    // Another charger's key is its own.
    expect(storedSessionTags(again, 'other', logger).get()).toBeUndefined();
    memory.set(undefined);
    expect(memory.get()).toBeUndefined();
    again.close();
    expect(lines.filter((l) => l.level === 'warn')).toEqual([]);
  });

  it('reads a corrupt row as no tag, with a STORE_FAILED warning', () => {
    const store = openStore({ path: join(tempDir('wattshift-tags-'), 'w.db') });
    const { logger, lines } = capture();
    // An id tag longer than OCPP's 20 characters, as a damaged or foreign row would hold.
    store.setState('ocpp-session:cp', { transactionId: 7, idTag: 'X'.repeat(21) });
    expect(storedSessionTags(store, 'cp', logger).get()).toBeUndefined();
    expect(lines.filter((l) => l.level === 'warn').map((l) => l.code)).toEqual(['STORE_FAILED']);
    store.close();
  });

  it('carries on when the store cannot write, with a STORE_FAILED warning', () => {
    const store = openStore({ path: join(tempDir('wattshift-tags-'), 'w.db') });
    const { logger, lines } = capture();
    const memory = storedSessionTags(store, 'cp', logger);
    store.close();
    expect(() => memory.set({ transactionId: 8, idTag: 'CARD-8' })).not.toThrow();
    expect(memory.get()).toBeUndefined();
    expect(lines.filter((l) => l.level === 'warn').map((l) => l.code)).toEqual(['STORE_FAILED', 'STORE_FAILED']);
  });
});
