/** The daemon's open replaces a damaged database (real SQLite files) and leaves a sound one alone. */
import { openSync, readdirSync, statSync, writeFileSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { createLogger } from '../src/log.js';
import { openStore } from '../src/store/index.js';
import { openStoreRecovering } from '../src/store/recover.js';
import { tempDir } from './helpers/temp-dir.js';

const clock = new ManualClock(Date.UTC(2026, 0, 14, 3));

function captured(): { lines: Record<string, unknown>[]; logger: ReturnType<typeof createLogger> } {
  const lines: Record<string, unknown>[] = [];
  return { lines, logger: createLogger({ destination: { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) } }) };
}

/** A database with enough events to span many pages, closed cleanly (checkpointed). */
function filledDatabase(path: string): void {
  const store = openStore({ path });
  for (let i = 0; i < 400; i++) {
    store.saveEvent({
      eventId: `e-${i}`,
      notificationType: null,
      payloadType: 'PriceCurve',
      createdAtMs: i,
      receivedAtMs: i,
      startMs: i,
      endMs: i + 1,
      locationIds: ['home'],
      resourceIds: ['r'],
      rawJson: JSON.stringify({ id: `e-${i}`, pad: 'x'.repeat(500) }),
      state: 'received',
    });
  }
  store.close();
}

describe('openStoreRecovering', () => {
  it('leaves a sound database alone', () => {
    const dir = tempDir('ws-recover-ok-');
    const path = join(dir, 'w.db');
    filledDatabase(path);
    const { lines, logger } = captured();
    const { store, recovery } = openStoreRecovering({ path, clock, logger });
    expect(recovery).toBeNull();
    expect(store.hasEvent('e-7')).toBe(true);
    store.close();
    expect(lines.filter((l) => l.code === 'STORE_CORRUPT')).toEqual([]);
  });

  it('moves a file that is no database aside and starts a new one', () => {
    const dir = tempDir('ws-recover-garbage-');
    const path = join(dir, 'w.db');
    writeFileSync(path, Buffer.alloc(64 * 1024, 0x5a));
    const { lines, logger } = captured();
    const { store, recovery } = openStoreRecovering({ path, clock, logger });
    expect(recovery?.movedTo).toBe(`${path}.corrupt.2026-01-14T03-00-00-000Z`);
    expect(statSync(recovery!.movedTo).size).toBe(64 * 1024);
    expect(store.listEvents()).toEqual([]);
    store.close();
    expect(lines.some((l) => l.level === 'error' && l.code === 'STORE_CORRUPT')).toBe(true);
  });

  it('finds damage in later pages with quick_check at start', () => {
    const dir = tempDir('ws-recover-pages-');
    const path = join(dir, 'w.db');
    filledDatabase(path);
    const size = statSync(path).size;
    expect(size).toBeGreaterThan(100 * 1024);
    // Garbage over a run of pages past the schema: opening works, reading those pages does not.
    const fd = openSync(path, 'r+');
    writeSync(fd, Buffer.alloc(16 * 4096, 0xa5), 0, 16 * 4096, Math.floor(size / 2 / 4096) * 4096);
    closeSync(fd);
    const { lines, logger } = captured();
    const { store, recovery } = openStoreRecovering({ path, clock, logger });
    expect(recovery?.reason).toMatch(/quick_check|malformed|corrupt/i);
    expect(store.listEvents()).toEqual([]);
    store.close();
    expect(readdirSync(dir).some((f) => f.startsWith('w.db.corrupt.'))).toBe(true);
    expect(lines.some((l) => l.code === 'STORE_CORRUPT')).toBe(true);
  });
});
