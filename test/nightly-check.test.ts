/** The nightly quick_check and retention against real SQLite files: sound, damaged, and unreadable. */
import { closeSync, openSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { nightlyStoreCheck } from '../src/jobs/nightly-check.js';
import { createLogger } from '../src/log.js';
import { openStore, type Store } from '../src/store/index.js';
import { tempDir } from './helpers/temp-dir.js';

const DAY = 86_400_000;
const now = Date.UTC(2026, 0, 14, 2, 30);
const retention = { hourlyDays: 30, eventsDays: 30, plansDays: 7 };

function captured() {
  const lines: Record<string, unknown>[] = [];
  return { lines, logger: createLogger({ destination: { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) } }) };
}

/** A database with old and new hours spread over many pages; closed (checkpointed). */
function filled(path: string): void {
  const store = openStore({ path, clock: new ManualClock(now) });
  const rows = Array.from({ length: 3000 }, (_, i) => ({
    subject: `device:d${i % 3}`,
    hourStartMs: now - 60 * DAY + Math.floor(i / 3) * 3_600_000 - ((now - 60 * DAY) % 3_600_000),
    kwh: 1,
    quality: 'measured' as const,
    samples: 1,
  }));
  store.upsertHourly(rows);
  store.close();
}

const hours = (store: Store): number => ['device:d0', 'device:d1', 'device:d2'].reduce((n, s) => n + store.readHourly(s, 0, now + DAY).length, 0);

describe('the nightly store check', () => {
  it('checks, then prunes a sound database', () => {
    const path = join(tempDir('ws-nightly-ok-'), 'w.db');
    filled(path);
    const store = openStore({ path });
    const { lines, logger } = captured();
    const out = nightlyStoreCheck({ store, nowMs: now, checkedRecently: false, retention, logger });
    expect(out).toMatchObject({ check: 'ok', pruned: { hourly: expect.any(Number) } });
    expect((out as { pruned: { hourly: number } }).pruned.hourly).toBeGreaterThan(0);
    expect(hours(store)).toBeLessThan(3000);
    expect(lines.filter((l) => l.level === 'warn' || l.level === 'error')).toEqual([]);
    store.close();
  });

  it('does not prune a damaged database: STORE_CORRUPT, and nothing deleted', () => {
    const path = join(tempDir('ws-nightly-corrupt-'), 'w.db');
    filled(path);
    const size = statSync(path).size;
    const fd = openSync(path, 'r+');
    writeSync(fd, Buffer.alloc(8 * 4096, 0xa5), 0, 8 * 4096, Math.floor(size / 2 / 4096) * 4096);
    closeSync(fd);
    const store = openStore({ path });
    const { lines, logger } = captured();
    const pruned: unknown[] = [];
    const out = nightlyStoreCheck({
      store: { integrityCheck: (m) => store.integrityCheck(m), prune: (...a) => (pruned.push(a), store.prune(...a)) },
      nowMs: now,
      checkedRecently: false,
      retention,
      logger,
    });
    expect(out.check).toBe('corrupt');
    expect(pruned).toEqual([]);
    expect(lines.find((l) => l.code === 'STORE_CORRUPT')).toMatchObject({ level: 'error', msg: expect.stringContaining('restart the service') });
    store.close();
  });

  it('a check that cannot run skips the prune and says so with its code', () => {
    const path = join(tempDir('ws-nightly-closed-'), 'w.db');
    filled(path);
    const store = openStore({ path });
    store.close(); // every statement now fails, as with an I/O error
    const { lines, logger } = captured();
    const out = nightlyStoreCheck({ store, nowMs: now, checkedRecently: false, retention, logger });
    expect(out).toMatchObject({ check: 'failed', error: { code: 'STORE_FAILED' } });
    expect(lines.find((l) => l.code === 'STORE_FAILED')).toMatchObject({ level: 'warn', msg: expect.stringContaining('retention skipped tonight') });
  });

  it('right after the open checked the file, prunes without reading it all again', () => {
    const path = join(tempDir('ws-nightly-skip-'), 'w.db');
    filled(path);
    const store = openStore({ path });
    const checks: unknown[] = [];
    const out = nightlyStoreCheck({
      store: { integrityCheck: (m) => (checks.push(m), store.integrityCheck(m)), prune: (...a) => store.prune(...a) },
      nowMs: now,
      checkedRecently: true,
      retention,
      logger: captured().logger,
    });
    expect(out.check).toBe('skipped');
    expect(checks).toEqual([]);
    store.close();
  });
});
